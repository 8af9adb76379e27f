# Outpost images. No Docker engine runs where this is developed: this file is kept right by reading
# and by test/deploy/dockerfile.test.ts (README says so). Targets:
#   docker build -t outpost-agent .                          standard agent (default, last stage)
#   docker build --target uptime -t outpost-agent-uptime .   API, TCP, DNS and ICMP only: no browser
#   docker build --target service -t outpost-service .       `outpost serve`
# Every image runs as the numeric user 10001:10001 (`outpost`), so Kubernetes' runAsNonRoot can verify
# it without reading /etc/passwd. The standard agent keeps each sandbox under a uid of its own only
# when it is started as root (`docker run --user 0`, deploy/compose/compose.yaml, the Kubernetes
# component deploy/kubernetes/sandbox-isolation): as 10001 it stops at start with exit 2 naming
# SANDBOX_ISOLATION rather than run user code unprotected (docs/sandbox.md, "Signals and users";
# docs/deploy.md, "Users and capabilities").
#
# The base image is pinned by digest (Node 24.18.0, bookworm-slim): docs/deploy.md, "Pinning the base
# images", says where the digest came from and how to move it (or override it with --build-arg).
ARG NODE_IMAGE=node:24-bookworm-slim@sha256:6f7b03f7c2c8e2e784dcf9295400527b9b1270fd37b7e9a7285cf83b6951452d

# ---- build: compile TypeScript to dist/ ----------------------------------------------------------
FROM ${NODE_IMAGE} AS build
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
# The ICMP helper (src/agent/checks/icmp/helper/outpost-icmp.c), with the flags its tests build it
# with (helper/build.ts). The compiler stays in this stage; the images get the binary alone.
RUN apt-get update \
 && apt-get install -y --no-install-recommends gcc libc6-dev \
 && rm -rf /var/lib/apt/lists/* \
 && cc -O2 -Wall -Wextra -Werror -o /src/outpost-icmp src/agent/checks/icmp/helper/outpost-icmp.c
# build also copies non-TypeScript files (the sandbox's child bootstrap) into dist/. prune drops the dev
# tools, the "node" devDependency included: the base image is Node 24 already.
RUN npm run build && npm prune --omit=dev

# ---- base: what every image shares --------------------------------------------------------------
FROM ${NODE_IMAGE} AS base
# tini reaps zombies and forwards SIGTERM, so the agent drains and the service closes on `docker stop`.
# The user is created with fixed numbers: manifests and runAsUser name 10001, never a name.
RUN apt-get update \
 && apt-get install -y --no-install-recommends tini ca-certificates \
 && rm -rf /var/lib/apt/lists/* \
 && groupadd --gid 10001 outpost \
 && useradd --uid 10001 --gid 10001 --no-log-init --home-dir /var/lib/outpost --create-home --shell /usr/sbin/nologin outpost
WORKDIR /app
COPY --from=build /src/package.json ./package.json
COPY --from=build /src/node_modules ./node_modules
COPY --from=build /src/dist ./dist
ENV NODE_ENV=production

# ---- service: `outpost serve` ---------------------------------------------------------------------
FROM base AS service
# DATABASE_URL=postgres://user:password@host:5432/db selects the PostgreSQL backend (several replicas
# on one database); unset, the service keeps SQLite in $DATA_DIR/outpost.db (one replica). DATA_DIR
# also holds artifacts, suite archives and, unless SECRETS_KEY is set, the generated secrets key: make
# it a volume (shared by every replica when there are several). docs/deploy.md.
RUN mkdir -p /var/lib/outpost/data && chown -R 10001:10001 /var/lib/outpost
ENV PORT=8080 \
    DATA_DIR=/var/lib/outpost/data
VOLUME ["/var/lib/outpost/data"]
EXPOSE 8080
USER 10001:10001
HEALTHCHECK --interval=30s --timeout=5s --start-period=60s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:'+(process.env.PORT||8080)+'/-/liveness').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"]
ENTRYPOINT ["/usr/bin/tini", "--", "node", "/app/dist/cli/main.js"]
CMD ["serve"]

# ---- uptime: the lightweight agent image for protocol checks ---------------------------------------
FROM base AS uptime
# The ICMP helper sends every ICMP check's echo requests from one process (ICMP_HELPER_PATH). It
# opens an unprivileged ICMP datagram socket where net.ipv4.ping_group_range allows (Docker's default
# does), else a raw socket from its cap_net_raw file capability (which takes effect only while NET_RAW
# stays in the container's bounding set and no_new_privs is off); either way it drops every capability
# before it reads a request (docs/checks.md, "How the agent pings"). fping (Debian installs it with
# cap_net_raw, and brings setcap) stays for an agent started without ICMP_HELPER_PATH.
COPY --from=build /src/outpost-icmp /usr/local/libexec/outpost-icmp
# traceroute (unprivileged UDP) and tcpdump serve API checks' network diagnostics; tcpdump captures
# only when the agent has NET_RAW itself. docs/checks.md.
# Then every setuid and setgid bit goes (su, mount, passwd, ...): the agent needs none, and without
# them the only privilege a process of this image can gain by exec is NET_RAW, from fping's and the
# ICMP helper's file capabilities, which is what lets Kubernetes run it with allowPrivilegeEscalation
# left on (docs/deploy.md).
RUN apt-get update \
 && apt-get install -y --no-install-recommends fping traceroute tcpdump \
 && rm -rf /var/lib/apt/lists/* \
 && find / -xdev -type f -perm /6000 -exec chmod ug-s {} + \
 && setcap cap_net_raw=ep /usr/local/libexec/outpost-icmp \
 && mkdir -p /var/lib/outpost/spool && chown -R 10001:10001 /var/lib/outpost
# The agent's V8 flags, from the same file bin/outpost reads (BENCHMARKS.md, "Agent memory").
COPY bin/agent-node-flags ./agent-node-flags
# Its malloc settings: the same pairs as bin/agent-env (test/agent/agent-env.test.ts checks); -e overrides.
ENV MALLOC_ARENA_MAX=2 \
    MALLOC_TRIM_THRESHOLD_=65536
ENV AGENT_HEALTH_PORT=8081 \
    SPOOL_DIR=/var/lib/outpost/spool \
    ICMP_HELPER_PATH=/usr/local/libexec/outpost-icmp \
    OUTPOST_IMAGE=uptime
# Results that could not be delivered survive a restart when this is a volume.
VOLUME ["/var/lib/outpost/spool"]
EXPOSE 8081
USER 10001:10001
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
# The setuid sweep again, for whatever these packages brought.
RUN apt-get update \
 && apt-get install -y --no-install-recommends chromium fonts-liberation ffmpeg \
 && rm -rf /var/lib/apt/lists/* \
 && find / -xdev -type f -perm /6000 -exec chmod ug-s {} +
ENV CHROMIUM_PATH=/usr/bin/chromium \
    PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD=1 \
    OUTPOST_IMAGE=standard
# User code must not be able to signal the agent or another job's sandbox, and the kernel allows a
# signal only between processes of the same uid. So each sandbox runs under a uid of its own
# (61000-62023, none of them in /etc/passwd, no groups, no capabilities, no_new_privs), started with
# util-linux's setpriv (always in Debian), and the agent needs CAP_SETUID, CAP_SETGID, CAP_CHOWN,
# CAP_KILL and CAP_DAC_OVERRIDE to switch to them, give them their job folder and clean up after
# them: root with those capabilities. The image still declares the unprivileged user, so nothing runs
# as root unless the operator says so (`docker run --user 0`, compose's `user: "0:0"`, the Kubernetes
# component sandbox-isolation). A non-root agent with a setpriv carrying cap_setuid as a file
# capability was the alternative; it makes the agent's user able to become root anyway
# (setpriv --reuid=0), without the rest. SANDBOX_ISOLATION=uid makes a container started without
# root and those capabilities (this image's default user, --cap-drop, Kubernetes runAsNonRoot) stop
# at start with exit 2 and a message naming the variable, instead of running user code unprotected;
# SANDBOX_ISOLATION=none is the explicit opt-out. /app and the runtimes stay root-owned and
# world-readable, which is what the sandbox uids need to load the bootstrap and the runtimes.
ENV SANDBOX_ISOLATION=uid
USER 10001:10001
