#!/usr/bin/env bash
# `npm run runtimes:install`: installs every runtime under runtimes/ (or RUNTIMES_DIR) from its
# lockfile with `npm ci`: its pinned Node.js (the npm "node" package) and the libraries user scripts
# may require. Playwright's browsers are not downloaded (the agent uses the system's Chromium).
# A runtime whose node_modules already matches its lockfile is skipped, so a warm machine pays
# nothing; `--force` reinstalls all.
# runtimes/suite-engines (Node 22/24/26, Bun 1.3, npm, pnpm and Yarn for Playwright check suites,
# docs/suites.md) is one of these folders and installs the same way; the agent does not take it for
# a runtime (runtime ids look like 2026.04).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
dir="${RUNTIMES_DIR:-$root/runtimes}"
force=0
[ "${1:-}" = "--force" ] && force=1
export PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD=1
# The runtimes' own Node must not be what npm runs under: use the project's Node 24 and npm.
export PATH="$root/node_modules/.bin:$PATH"

shopt -s nullglob
installed=0
pids=()
names=()
for rt in "$dir"/*/; do
  rt="${rt%/}"
  id="$(basename "$rt")"
  [ -f "$rt/package-lock.json" ] || continue
  # npm ci writes node_modules/.package-lock.json; equal to the lockfile's packages means up to date.
  if [ "$force" = 0 ] && [ -x "$rt/node_modules/.bin/node" ] && [ -f "$rt/node_modules/.package-lock.json" ] \
    && [ "$rt/node_modules/.package-lock.json" -nt "$rt/package-lock.json" ] && "$rt/node_modules/.bin/node" --version >/dev/null 2>&1; then
    echo "runtime $id: up to date ($("$rt/node_modules/.bin/node" --version))"
    continue
  fi
  echo "runtime $id: npm ci"
  # Both runtimes install at once: the time is mostly waiting on the registry.
  (cd "$rt" && npm ci --no-audit --no-fund --loglevel=error) &
  pids+=("$!")
  names+=("$id")
  installed=$((installed + 1))
done
status=0
for i in "${!pids[@]}"; do
  if wait "${pids[$i]}"; then
    echo "runtime ${names[$i]}: installed ($("$dir/${names[$i]}/node_modules/.bin/node" --version))"
  else
    echo "runtime ${names[$i]}: npm ci failed" >&2
    status=1
  fi
done
exit "$status"
