# Outpost agent images. No Docker engine runs where this is developed: this file is kept right by
# reading (README says so). Targets:
#   docker build -t outpost-agent .                        standard agent (default, last stage)
#   docker build --target uptime -t outpost-agent-uptime . API, TCP, DNS and ICMP only: no browser
# Both run `outpost agent` under tini, expose the health port and probe liveness. The uptime image runs
# no user code and runs as the non-root user outpost; the standard image runs the agent as root so it
# can start each sandbox under a uid of its own (docs/sandbox.md, "Signals and users").

# ---- build: compile TypeScript to dist/ ----------------------------------------------------------
FROM node:24-bookworm-slim AS build
WORKDIR /src
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund
COPY tsconfig.json tsconfig.build.json ./
COPY scripts ./scripts
COPY src ./src
# The runtimes user code runs on (runtimes/<id>: its own pinned Node from the npm "node" package and
# the libraries scripts may require), installed from their lockfiles. Playwright's browser download is
# off: the standard image uses Debian's Chromium.
COPY runtimes ./runtimes
RUN PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD=1 npm run runtimes:install
# build also copies non-TypeScript files (the sandbox's child bootstrap) into dist/. prune drops the dev
# tools, the "node" devDependency included: the base image is Node 24 already.
RUN npm run build && npm prune --omit=dev

# ---- uptime: the lightweight image for protocol checks -------------------------------------------
FROM node:24-bookworm-slim AS uptime
# tini reaps zombies and forwards SIGTERM so the agent drains on `docker stop`.
# fping sends ICMP checks' echo requests, many checks per process; Debian installs it with the
# cap_net_raw file capability, so ICMP works without running the agent as root as long as NET_RAW stays
# in the container's bounding set (Docker's default). traceroute (unprivileged UDP) and tcpdump serve
# API checks' network diagnostics; tcpdump captures only when the agent has NET_RAW itself. docs/checks.md.
RUN apt-get update \
 && apt-get install -y --no-install-recommends tini ca-certificates fping traceroute tcpdump \
 && rm -rf /var/lib/apt/lists/* \
 && groupadd --system outpost && useradd --system --gid outpost --home-dir /var/lib/outpost --create-home outpost \
 && mkdir -p /var/lib/outpost/spool && chown -R outpost:outpost /var/lib/outpost
WORKDIR /app
COPY --from=build /src/package.json ./package.json
COPY --from=build /src/node_modules ./node_modules
COPY --from=build /src/dist ./dist
# The agent's V8 flags, from the same file bin/outpost reads (BENCHMARKS.md, "Agent memory").
COPY bin/agent-node-flags ./agent-node-flags
# Its malloc settings: the same pairs as bin/agent-env (test/agent/agent-env.test.ts checks); -e overrides.
ENV MALLOC_ARENA_MAX=2 \
    MALLOC_TRIM_THRESHOLD_=65536
ENV NODE_ENV=production \
    AGENT_HEALTH_PORT=8081 \
    SPOOL_DIR=/var/lib/outpost/spool \
    OUTPOST_IMAGE=uptime
# Results that could not be delivered survive a restart when this is a volume.
VOLUME ["/var/lib/outpost/spool"]
EXPOSE 8081
USER outpost
HEALTHCHECK --interval=30s --timeout=5s --start-period=20s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:'+(process.env.AGENT_HEALTH_PORT||8081)+'/-/liveness').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"]
# sh only expands the flags file, then exec hands over to node (tini still signals node directly).
ENTRYPOINT ["/usr/bin/tini", "--", "/bin/sh", "-c", "exec node $(cat /app/agent-node-flags) /app/dist/cli/main.js \"$@\"", "outpost"]
CMD ["agent"]

# ---- standard: everything, with Debian's Chromium for browser checks -----------------------------
FROM uptime AS standard
USER root
# User code (setup/teardown scripts, browser checks, suites) runs in a sandbox on these runtimes;
# the uptime image carries none, so the agent there advertises no runtime and gets no such job.
COPY --from=build /src/runtimes /app/runtimes
# Debian's Chromium: nothing in this image downloads a browser (PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD).
# ffmpeg encodes browser check videos (Playwright's own download is replaced by the system one).
RUN apt-get update \
 && apt-get install -y --no-install-recommends chromium fonts-liberation ffmpeg \
 && rm -rf /var/lib/apt/lists/*
ENV CHROMIUM_PATH=/usr/bin/chromium \
    PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD=1 \
    OUTPOST_IMAGE=standard
# User code must not be able to signal the agent or another job's sandbox, and the kernel allows a
# signal only between processes of the same uid. So each sandbox runs under a uid of its own
# (61000-62023, none of them in /etc/passwd, no groups, no capabilities, no_new_privs), started with
# util-linux's setpriv (always in Debian), and the agent needs CAP_SETUID, CAP_SETGID, CAP_CHOWN,
# CAP_KILL and CAP_DAC_OVERRIDE to switch to them, give them their job folder and clean up after
# them: root with Docker's default capabilities. A non-root agent with a setpriv carrying
# cap_setuid as a file capability was the alternative; it makes the agent's user able to become
# root anyway (setpriv --reuid=0), without the rest. SANDBOX_ISOLATION=uid makes a container
# started without those capabilities (--user, --cap-drop, Kubernetes runAsNonRoot) stop at start
# with exit 2 and a message naming the variable, instead of running user code unprotected;
# SANDBOX_ISOLATION=none is the explicit opt-out. /app and the runtimes stay root-owned and
# world-readable, which is what the sandbox uids need to load the bootstrap and the runtimes.
ENV SANDBOX_ISOLATION=uid
USER root
