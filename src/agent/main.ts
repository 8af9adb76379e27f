import { EXIT } from '../shared/errors.ts';
import { accessSync, constants, existsSync } from 'node:fs';
import path from 'node:path';
import { type Env, readString } from '../shared/env.ts';
import { VERSION } from '../shared/version.ts';
import { type ArtifactUploader, loadArtifactUploaderConfig, openArtifactUploader } from './artifacts/index.ts';
import { RUNNERS, selectRunners } from './checks/index.ts';
import { ServiceClient } from './client.ts';
import { type AgentConfig, loadAgentConfig } from './config.ts';
import { AgentDaemon } from './daemon.ts';
import { type HealthServer, startHealthServer } from './health.ts';
import { createAgentLogger, flushLogger } from './logger.ts';
import { createAgentMetrics } from './metrics.ts';
import { IdleMemoryRelease } from './memory-release.ts';
import { Observability } from './observability.ts';
import { discoverRuntimes } from './runtimes.ts';
import { detectIsolation, loadIsolationSettings } from './sandbox/isolation.ts';
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
 * `outpost agent`: loads the config, starts the probes and the daemon, and resolves with the exit
 * code. A ConfigError is thrown to the caller (the CLI prints its one-line message and exits 2).
 */
export async function runAgent(env: Env = process.env, options: RunAgentOptions = {}): Promise<number> {
  const config: AgentConfig = loadAgentConfig(env);
  // Before anything starts: an unusable spool is a configuration error (exit 2), not a crash later.
  await prepareSpoolDir(config.spoolDir);
  // Read with the rest, before anything starts, so a bad value is a clean exit 2.
  const artifactConfig = loadArtifactUploaderConfig(env, config.spoolDir);
  const suiteEnginesDir = loadSuiteRunnerConfig(env).enginesDir;
  // Before anything starts too: SANDBOX_ISOLATION=uid on a machine that cannot switch uids is exit 2.
  const isolation = await detectIsolation(loadIsolationSettings(env));
  const exit = options.exit ?? ((code: number) => process.exit(code));
  const handleSignals = options.handleSignals ?? true;

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

  let spool: ResultSpool;
  try {
    spool = await ResultSpool.open({ dir: config.spoolDir, maxBytes: config.spoolMaxBytes, log });
  } catch (err) {
    log.fatal({ err }, `cannot use the spool directory ${config.spoolDir} (SPOOL_DIR)`);
    await client.close();
    return EXIT.failure;
  }

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
  // Heavy check types are advertised only when this machine can run them (no Chromium in the uptime image).
  const { runners, omitted } = selectRunners(RUNNERS, {
    chromium: isExecutable(readString(env, 'CHROMIUM_PATH', '/usr/bin/chromium')),
    runtimes: found.runtimes.length > 0,
    suiteEngines: existsSync(path.join(suiteEnginesDir, 'node_modules')),
  });
  for (const o of omitted)
    log.info({ checkType: o.checkType, reason: o.reason }, 'check type not offered by this agent');

  const sandboxes = new SandboxPool({
    isolation,
    runtimes: found.runtimes,
    size: config.sandboxPoolSize,
    limits: { rssMb: config.sandboxMemoryMb, heapMb: Math.max(48, Math.floor((config.sandboxMemoryMb * 3) / 4)) },
    log,
  });
  // Not filled here: the first job that needs a sandbox starts one and fills the pool behind it, so an
  // agent whose checks run no user code never starts a sandbox process (docs/sandbox.md).

  // Files runs produce wait in a queue beside the spool and upload over the agent's own connection.
  let artifacts: ArtifactUploader;
  try {
    artifacts = await openArtifactUploader({
      config: artifactConfig,
      apiUrl: config.apiUrl,
      apiKey: config.apiKey,
      dispatcher: client.dispatcher,
      log,
    });
  } catch (err) {
    log.fatal({ err }, `cannot use the artifact queue under ${config.spoolDir} (SPOOL_DIR)`);
    await client.close();
    return EXIT.failure;
  }

  const daemon = new AgentDaemon({
    client,
    spool,
    log,
    runners,
    uptimeConcurrency: config.uptimeConcurrency,
    jobConcurrency: config.jobConcurrency,
    shutdownGraceSeconds: config.shutdownGraceSeconds,
    useOsDnsResolver: config.useOsDnsResolver,
    apiUrl: config.apiUrl.toString(),
    observability,
    sandboxes,
    artifacts,
  });

  const memory = new IdleMemoryRelease({
    released: (runs, ms) => log.debug({ runs, ms }, 'quiet after a burst: heap collected and compacted'),
  });
  daemon.on('slot-freed', () => memory.runFinished());

  // Hooked before start(): the deliverer's first events (results an earlier process spooled) count too.
  const metrics = createAgentMetrics({ daemon, spool, sandboxes, artifacts });
  let health: HealthServer;
  try {
    health = await startHealthServer({ host: config.healthHost, port: config.healthPort, source: daemon, metrics });
  } catch (err) {
    log.fatal(
      { err },
      `cannot listen on ${config.healthHost}:${config.healthPort} (AGENT_HEALTH_HOST/AGENT_HEALTH_PORT)`,
    );
    await client.close();
    await sandboxes.close();
    await artifacts.close();
    return EXIT.failure;
  }
  log.info({ port: health.port, host: config.healthHost }, 'probes listening');

  const signalHandlers: Array<[NodeJS.Signals, () => void]> = [];
  if (handleSignals) {
    observability.installProcessHandlers(exit);
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
  }

  await daemon.start();
  const code = await daemon.done;
  memory.stop();
  await sandboxes.close();
  // Uploads still under way stay queued on disk and resume at the next start.
  await artifacts.close();

  await health.close();
  await client.close();
  await observability.close();
  for (const [sig, handler] of signalHandlers) process.off(sig, handler);
  observability.removeProcessHandlers();
  await flushLogger(log);
  return code;
}

function isExecutable(file: string): boolean {
  try {
    accessSync(file, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}
