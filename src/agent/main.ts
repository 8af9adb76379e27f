import { EXIT } from '../shared/errors.ts';
import { existsSync } from 'node:fs';
import { isExecutable } from '../shared/executable.ts';
import path from 'node:path';
import { type Env, readString } from '../shared/env.ts';
import { VERSION } from '../shared/version.ts';
import {
  type ArtifactUploader,
  type ArtifactUploaderConfig,
  loadArtifactUploaderConfig,
  openArtifactUploader,
} from './artifacts/index.ts';
import { RUNNERS, selectRunners } from './checks/index.ts';
import { ServiceClient } from './client.ts';
import { type AgentConfig, loadAgentConfig } from './config.ts';
import { AgentDaemon } from './daemon.ts';
import { type HealthServer, startHealthServer } from './health.ts';
import { createAgentLogger, flushLogger, type Logger } from './logger.ts';
import { createAgentMetrics } from './metrics.ts';
import { IdleMemoryRelease } from './memory-release.ts';
import { Observability } from './observability.ts';
import { discoverRuntimes, type Runtime } from './runtimes.ts';
import { detectIsolation, loadIsolationSettings, type SandboxIsolation } from './sandbox/isolation.ts';
import { SandboxPool } from './sandbox/pool.ts';
import { loadSuiteRunnerConfig } from './suites/config.ts';
import { ResultSpool } from './spool.ts';
import { prepareSpoolDir } from './spool-dir.ts';

export interface RunAgentOptions {
  /** Exits the process at once (second signal, uncaught exception). Injected by tests. */
  exit?: (code: number) => void;
  /** Whether to install SIGTERM/SIGINT and crash handlers; tests drive stop() themselves. */
  handleSignals?: boolean;
}

/** What the agent reads before anything starts: a bad value is a clean exit 2, not a crash later. */
interface StartupSettings {
  config: AgentConfig;
  artifactConfig: ArtifactUploaderConfig;
  suiteEnginesDir: string;
  isolation: SandboxIsolation;
}

/** The connection to the service and the logging every later phase uses. */
interface AgentCore {
  config: AgentConfig;
  client: ServiceClient;
  observability: Observability;
  log: Logger;
}

/** Everything a started agent closes again when its daemon is done, in this order. */
interface RunningAgent {
  core: AgentCore;
  daemon: AgentDaemon;
  memory: IdleMemoryRelease;
  sandboxes: SandboxPool;
  artifacts: ArtifactUploader;
  health: HealthServer;
  signalHandlers: Array<[NodeJS.Signals, () => void]>;
}

/** The parts the daemon runs with, opened before it. */
interface DaemonParts {
  spool: ResultSpool;
  runners: ReturnType<typeof selectRunners>['runners'];
  sandboxes: SandboxPool;
  artifacts: ArtifactUploader;
}

/**
 * `outpost agent`: loads the config, starts the probes and the daemon, and resolves with the exit
 * code. A ConfigError is thrown to the caller (the CLI prints its one-line message and exits 2).
 */
export async function runAgent(env: Env = process.env, options: RunAgentOptions = {}): Promise<number> {
  const settings = await readSettings(env);
  const exit = options.exit ?? ((code: number) => process.exit(code));
  const handleSignals = options.handleSignals ?? true;
  const core = connect(settings.config);
  const parts = await openDaemonParts(core, env, settings);
  if (!parts) return EXIT.failure;
  const daemon = createDaemon(core, parts);
  const memory = releaseMemoryWhenIdle(core.log, daemon);
  const health = await serveHealth(core, daemon, parts);
  if (!health) return EXIT.failure;
  const signalHandlers = handleSignals ? wireSignals(core, daemon, exit) : [];
  return runUntilDone({
    core,
    daemon,
    memory,
    sandboxes: parts.sandboxes,
    artifacts: parts.artifacts,
    health,
    signalHandlers,
  });
}

async function readSettings(env: Env): Promise<StartupSettings> {
  const config = loadAgentConfig(env);
  // Before anything starts: an unusable spool is a configuration error (exit 2), not a crash later.
  await prepareSpoolDir(config.spoolDir);
  // Read with the rest, before anything starts, so a bad value is a clean exit 2.
  const artifactConfig = loadArtifactUploaderConfig(env, config.spoolDir);
  const suiteEnginesDir = loadSuiteRunnerConfig(env).enginesDir;
  // Before anything starts too: SANDBOX_ISOLATION=uid on a machine that cannot switch uids is exit 2.
  const isolation = await detectIsolation(loadIsolationSettings(env));
  return { config, artifactConfig, suiteEnginesDir, isolation };
}

/** The service client, the error reporting that uses its connection, and the agent's logger. */
function connect(config: AgentConfig): AgentCore {
  const client = new ServiceClient({
    apiUrl: config.apiUrl,
    apiKey: config.apiKey,
    proxy: config.proxy,
    version: VERSION,
  });
  const observability = new Observability({ enabled: config.externalObservability, dispatcher: client.dispatcher });
  const log = createAgentLogger({ level: config.logLevel, errorSink: observability });
  observability.setLogger(log);
  log.info(
    {
      apiUrl: config.apiUrl.toString(),
      uptimeConcurrency: config.uptimeConcurrency,
      jobConcurrency: config.jobConcurrency,
      httpProxy: describeProxy(config.proxy.httpProxy),
      httpsProxy: describeProxy(config.proxy.httpsProxy),
      spoolDir: config.spoolDir,
      externalObservability: config.externalObservability,
    },
    'outpost agent starting',
  );
  return { config, client, observability, log };
}

/** A proxy URL may carry user:password; log only where it points. */
function describeProxy(url: string | undefined): string | undefined {
  if (!url) return undefined;
  try {
    const u = new URL(url);
    return `${u.protocol}//${u.host}`;
  } catch {
    return '[invalid]';
  }
}

/**
 * `open()`'s value; or, when it throws, undefined once the failure is logged as fatal and the client
 * and `opened` are closed (the caller then returns EXIT.failure).
 */
async function openOrFail<T>(
  core: AgentCore,
  open: () => Promise<T>,
  fatal: string,
  opened: ReadonlyArray<{ close(): Promise<unknown> }> = [],
): Promise<T | undefined> {
  try {
    return await open();
  } catch (err) {
    core.log.fatal({ err }, fatal);
    await core.client.close();
    for (const part of opened) await part.close();
    return undefined;
  }
}

/** The spool, the check runners this machine can offer, the sandbox pool and the artifact queue. */
async function openDaemonParts(core: AgentCore, env: Env, settings: StartupSettings): Promise<DaemonParts | undefined> {
  const { config, log } = core;
  const spool = await openOrFail(
    core,
    () => ResultSpool.open({ dir: config.spoolDir, maxBytes: config.spoolMaxBytes, log }),
    `cannot use the spool directory ${config.spoolDir} (SPOOL_DIR)`,
  );
  if (!spool) return undefined;
  const runtimes = await findRuntimes(core, settings.isolation);
  const runners = offeredRunners(log, env, runtimes.length > 0, settings.suiteEnginesDir);
  const sandboxes = new SandboxPool({
    isolation: settings.isolation,
    runtimes,
    size: config.sandboxPoolSize,
    limits: { rssMb: config.sandboxMemoryMb, heapMb: Math.max(48, Math.floor((config.sandboxMemoryMb * 3) / 4)) },
    log,
  });
  // Not filled here: the first job that needs a sandbox starts one and fills the pool behind it, so an
  // agent whose checks run no user code never starts a sandbox process (docs/sandbox.md).

  // Files runs produce wait in a queue beside the spool and upload over the agent's own connection.
  const artifacts = await openOrFail(
    core,
    () =>
      openArtifactUploader({
        config: settings.artifactConfig,
        apiUrl: config.apiUrl,
        apiKey: config.apiKey,
        dispatcher: core.client.dispatcher,
        log,
      }),
    `cannot use the artifact queue under ${config.spoolDir} (SPOOL_DIR)`,
  );
  if (!artifacts) return undefined;
  return { spool, runners, sandboxes, artifacts };
}

/** The runtimes whose Node answers, logged with how user code is isolated. */
async function findRuntimes(core: AgentCore, isolation: SandboxIsolation): Promise<Runtime[]> {
  const { config, log } = core;
  // User code runs only in runtimes whose Node answers; the agent advertises exactly those.
  const found = await discoverRuntimes(config.runtimesDir);
  for (const b of found.broken)
    log.warn({ runtime: b.id, dir: b.dir, reason: b.reason }, 'runtime not usable; not advertised');
  log.info(
    {
      runtimesDir: config.runtimesDir,
      runtimes: found.runtimes.map((r) => `${r.id} (Node ${r.nodeVersion})`),
      poolSize: config.sandboxPoolSize,
    },
    found.runtimes.length > 0
      ? 'runtimes for user code'
      : 'no runtimes for user code: checks with scripts are not leased to this agent',
  );
  if (isolation.kind === 'uid') {
    log.info(
      {
        isolation: 'uid',
        uids: `${isolation.uids.base}-${isolation.uids.base + isolation.uids.count - 1}`,
        launcher: isolation.launcher,
      },
      'user code runs under a uid of its own per sandbox',
    );
  } else if (found.runtimes.length > 0) {
    log.warn(
      { isolation: 'none', reason: isolation.reason },
      "user code runs as the agent's own user: a script can signal the agent and other jobs (SANDBOX_ISOLATION, docs/sandbox.md)",
    );
  }
  return found.runtimes;
}

/** Heavy check types are advertised only when this machine can run them (no Chromium in the uptime image). */
function offeredRunners(log: Logger, env: Env, hasRuntimes: boolean, suiteEnginesDir: string): DaemonParts['runners'] {
  const { runners, omitted } = selectRunners(RUNNERS, {
    chromium: isExecutable(readString(env, 'CHROMIUM_PATH', '/usr/bin/chromium')),
    runtimes: hasRuntimes,
    suiteEngines: existsSync(path.join(suiteEnginesDir, 'node_modules')),
  });
  for (const o of omitted)
    log.info({ checkType: o.checkType, reason: o.reason }, 'check type not offered by this agent');
  return runners;
}

function createDaemon(core: AgentCore, parts: DaemonParts): AgentDaemon {
  const { config } = core;
  return new AgentDaemon({
    client: core.client,
    spool: parts.spool,
    log: core.log,
    runners: parts.runners,
    uptimeConcurrency: config.uptimeConcurrency,
    jobConcurrency: config.jobConcurrency,
    shutdownGraceSeconds: config.shutdownGraceSeconds,
    useOsDnsResolver: config.useOsDnsResolver,
    apiUrl: config.apiUrl.toString(),
    observability: core.observability,
    sandboxes: parts.sandboxes,
    artifacts: parts.artifacts,
  });
}

/** Collects and compacts the heap when the daemon goes quiet after a burst of runs. */
function releaseMemoryWhenIdle(log: Logger, daemon: AgentDaemon): IdleMemoryRelease {
  const memory = new IdleMemoryRelease({
    released: (runs, ms) => log.debug({ runs, ms }, 'quiet after a burst: heap collected and compacted'),
  });
  daemon.on('slot-freed', () => memory.runFinished());
  return memory;
}

/** The probes and /metrics on the health port; undefined (all closed again) when it cannot listen. */
async function serveHealth(
  core: AgentCore,
  daemon: AgentDaemon,
  parts: DaemonParts,
): Promise<HealthServer | undefined> {
  const { config } = core;
  // Hooked before start(): the deliverer's first events (results an earlier process spooled) count too.
  const metrics = createAgentMetrics({
    daemon,
    spool: parts.spool,
    sandboxes: parts.sandboxes,
    artifacts: parts.artifacts,
  });
  const health = await openOrFail(
    core,
    () => startHealthServer({ host: config.healthHost, port: config.healthPort, source: daemon, metrics }),
    `cannot listen on ${config.healthHost}:${config.healthPort} (AGENT_HEALTH_HOST/AGENT_HEALTH_PORT)`,
    [parts.sandboxes, parts.artifacts],
  );
  if (health) core.log.info({ port: health.port, host: config.healthHost }, 'probes listening');
  return health;
}

/**
 * The crash handlers, and SIGTERM/SIGINT: the first stops the daemon gracefully, a second exits at
 * once. Returns the signal handlers, for runUntilDone to remove.
 */
function wireSignals(
  core: AgentCore,
  daemon: AgentDaemon,
  exit: (code: number) => void,
): Array<[NodeJS.Signals, () => void]> {
  const { log } = core;
  const signalHandlers: Array<[NodeJS.Signals, () => void]> = [];
  core.observability.installProcessHandlers(exit);
  let signalled = false;
  for (const sig of ['SIGTERM', 'SIGINT'] as const) {
    const handler = () => {
      if (signalled) {
        // An operator who asks twice wants out now; leases expire on the service on their own.
        log.warn({ signal: sig }, 'second signal: exiting immediately without finishing the shutdown');
        void flushLogger(log).finally(() => exit(EXIT.failure));
        return;
      }
      signalled = true;
      log.info({ signal: sig }, 'signal received: shutting down gracefully (send it again to exit at once)');
      void daemon.stop(`signal ${sig}`);
    };
    process.on(sig, handler);
    signalHandlers.push([sig, handler]);
  }
  return signalHandlers;
}

/** Runs the daemon until it is done, then closes everything in order; resolves with its exit code. */
async function runUntilDone(agent: RunningAgent): Promise<number> {
  const { core, daemon } = agent;
  await daemon.start();
  const code = await daemon.done;
  agent.memory.stop();
  await agent.sandboxes.close();
  // Uploads still under way stay queued on disk and resume at the next start.
  await agent.artifacts.close();

  await agent.health.close();
  await core.client.close();
  await core.observability.close();
  for (const [sig, handler] of agent.signalHandlers) process.off(sig, handler);
  core.observability.removeProcessHandlers();
  await flushLogger(core.log);
  return code;
}
