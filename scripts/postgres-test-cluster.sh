#!/usr/bin/env bash
# A throwaway PostgreSQL cluster for the tests: initdb in a temp folder, a free port on 127.0.0.1 only,
# trust authentication on loopback only. For tests only: fsync, synchronous_commit and full_page_writes
# are off, so a crash of this machine loses the cluster's data (it is thrown away anyway).
#
#   eval "$(scripts/postgres-test-cluster.sh start)"   # exports OUTPOST_TEST_DATABASE_URL and
#                                                      # OUTPOST_TEST_POSTGRES_DIR
#   scripts/postgres-test-cluster.sh stop              # stops it and removes the folder
#
# `start` prints only shell `export` lines on stdout (its progress goes to stderr), so eval is safe.
# `stop` takes the folder from its argument or from OUTPOST_TEST_POSTGRES_DIR.
# Run as root, the cluster belongs to the `postgres` system user (initdb refuses root); otherwise to you.
set -euo pipefail

say() { printf '%s\n' "$*" >&2; }
die() { say "postgres-test-cluster: $*"; exit 1; }

# pg_config knows the installed server's bindir; Debian also keeps one folder per major version.
find_bindir() {
  local dir
  if command -v pg_config >/dev/null 2>&1; then
    dir="$(pg_config --bindir 2>/dev/null || true)"
    [ -n "$dir" ] && [ -x "$dir/initdb" ] && { printf '%s\n' "$dir"; return; }
  fi
  dir="$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -t/ -k4,4n | tail -n 1 || true)"
  [ -n "$dir" ] && [ -x "$dir/initdb" ] && { printf '%s\n' "$dir"; return; }
  command -v initdb >/dev/null 2>&1 && { dirname "$(command -v initdb)"; return; }
  die "no PostgreSQL server binaries found (pg_config --bindir, /usr/lib/postgresql/*/bin, PATH); install Debian's postgresql package"
}

# Runs a command as the cluster's owner: `postgres` under root, the current user otherwise.
as_owner() {
  if [ "$(id -u)" -eq 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi
}

# A port nothing listens on right now, chosen by the kernel.
free_port() {
  node -e 'const s=require("node:net").createServer().listen(0,"127.0.0.1",()=>{console.log(s.address().port);s.close()})'
}

start() {
  local bindir dir port
  bindir="$(find_bindir)"
  dir="$(mktemp -d "${TMPDIR:-/tmp}/outpost-pg.XXXXXX")"
  chmod 0755 "$dir"
  mkdir -m 0700 "$dir/data"
  if [ "$(id -u)" -eq 0 ]; then chown -R postgres:postgres "$dir"; fi
  as_owner "$bindir/initdb" -D "$dir/data" -U postgres --auth=trust --encoding=UTF8 --locale=C.UTF-8 >"$dir/initdb.log" 2>&1 \
    || { cat "$dir/initdb.log" >&2; die "initdb failed"; }
  # Loopback only, and no other entry: nothing but 127.0.0.1 can connect at all.
  printf 'host all all 127.0.0.1/32 trust\nlocal all all trust\n' | as_owner tee "$dir/data/pg_hba.conf" >/dev/null
  port="$(free_port)"
  as_owner tee -a "$dir/data/postgresql.conf" >/dev/null <<EOF
listen_addresses = '127.0.0.1'
port = $port
unix_socket_directories = '$dir'
# Tests only: durability is not wanted from a cluster that is thrown away.
fsync = off
synchronous_commit = off
full_page_writes = off
# Test files run in parallel, each with its own pools and coordination connections.
max_connections = 300
EOF
  as_owner "$bindir/pg_ctl" -D "$dir/data" -l "$dir/server.log" -w -t 60 start >&2 \
    || { cat "$dir/server.log" >&2; die "the server did not start (log above)"; }
  say "postgres-test-cluster: PostgreSQL $("$bindir/postgres" --version | awk '{print $3}') on 127.0.0.1:$port, folder $dir"
  printf 'export OUTPOST_TEST_POSTGRES_DIR=%q\n' "$dir"
  printf 'export OUTPOST_TEST_DATABASE_URL=%q\n' "postgres://postgres@127.0.0.1:$port/postgres"
}

stop() {
  local dir="${1:-${OUTPOST_TEST_POSTGRES_DIR:-}}" bindir
  [ -n "$dir" ] || die "stop: name the cluster folder (argument or OUTPOST_TEST_POSTGRES_DIR)"
  [ -d "$dir/data" ] || die "stop: $dir holds no cluster"
  bindir="$(find_bindir)"
  # Silent: .ci/run stops the cluster after the tests, and the test run's closing line must stay the
  # last line of the CI log. The folder is removed either way.
  as_owner "$bindir/pg_ctl" -D "$dir/data" -m immediate -w stop >/dev/null 2>&1 || true
  rm -rf "$dir"
}

case "${1:-}" in
  start) start ;;
  stop) shift; stop "$@" ;;
  *) die "usage: $0 start | stop [folder]" ;;
esac
