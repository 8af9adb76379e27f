import { accessSync, constants, statSync } from 'node:fs';
import path from 'node:path';
import {
  type Env,
  readBoolean,
  readEnum,
  readInteger,
  readOptionalString,
  readRequiredString,
  readString,
  readUrl,
} from '../shared/env.ts';
import { ConfigError } from '../shared/errors.ts';
import { defaultRuntimesDir } from './runtimes.ts';

export const AGENT_LOG_LEVELS = ['DEBUG', 'LOG', 'INFO', 'WARN', 'ERROR'] as const;
export type AgentLogLevel = (typeof AGENT_LOG_LEVELS)[number];

export const DEFAULT_SPOOL_MAX_BYTES = 256 * 1024 * 1024;

/** Proxy settings for the agent's own connection to the service (never for the checks it runs). */
export interface ProxyConfig {
  httpProxy: string | undefined;
  httpsProxy: string | undefined;
  noProxy: string | undefined;
}

/** Everything `outpost agent` reads from its environment. README's table lists each one. */
export interface AgentConfig {
  /** The private-location key (pl_...). Only ServiceClient should keep a copy after start-up. */
  apiKey: string;
  apiUrl: URL;
  /** Concurrent heavy checks (browser, multistep, Playwright): each can take ~1.5 GB. */
  jobConcurrency: number;
  /** Concurrent uptime checks (API, TCP, DNS, ICMP). */
  uptimeConcurrency: number;
  logLevel: AgentLogLevel;
  healthPort: number;
  healthHost: string;
  proxy: ProxyConfig;
  /** Path from NODE_EXTRA_CA_CERTS, validated readable; Node itself loads it into the TLS store. */
  extraCaCerts: string | undefined;
  externalObservability: boolean;
  shutdownGraceSeconds: number;
  spoolDir: string;
  spoolMaxBytes: number;
  useOsDnsResolver: boolean;
  /** Where the runtimes for user code are (src/agent/runtimes.ts); default `<package root>/runtimes`. */
  runtimesDir: string;
  /** Warm sandboxes kept per runtime (src/agent/sandbox/pool.ts); 0 starts each on demand. */
  sandboxPoolSize: number;
  /** Resident memory a sandbox may use, in MB (the V8 heap cap is three quarters of it). */
  sandboxMemoryMb: number;
}

/** Upper- or lowercase proxy variable; lowercase wins, as in curl and undici's EnvHttpProxyAgent. */
function readProxyUrl(env: Env, upper: string): string | undefined {
  const lower = upper.toLowerCase();
  const name = readOptionalString(env, lower) !== undefined ? lower : upper;
  const value = readOptionalString(env, name);
  if (value === undefined) return undefined;
  return readUrl(env, name, value).toString();
}

export function loadAgentConfig(env: Env, cwd: string = process.cwd()): AgentConfig {
  const apiKey = readRequiredString(
    env,
    'API_KEY',
    'set it to a private location key (pl_...) from POST /v1/private-locations/{id}/keys',
  );
  if (!apiKey.startsWith('pl_')) {
    // Never echo the value: it may be a real secret of another kind pasted by mistake.
    throw new ConfigError('API_KEY', 'API_KEY is not a private location key; it must start with pl_');
  }

  const extraCaCerts = readOptionalString(env, 'NODE_EXTRA_CA_CERTS');
  if (extraCaCerts !== undefined) {
    // Node reads this file itself at process start and only prints a warning when it cannot, which
    // would leave a TLS-intercepting proxy failing later with an obscure certificate error.
    try {
      accessSync(extraCaCerts, constants.R_OK);
      if (!statSync(extraCaCerts).isFile()) throw new Error('not a file');
    } catch {
      throw new ConfigError(
        'NODE_EXTRA_CA_CERTS',
        `NODE_EXTRA_CA_CERTS=${JSON.stringify(extraCaCerts)} is not a readable file; point it at a PEM file of extra CA certificates`,
      );
    }
  }

  const observability = readOptionalString(env, 'EXTERNAL_OBSERVABILITY');
  if (observability !== undefined && !['on', 'off'].includes(observability.toLowerCase())) {
    throw new ConfigError(
      'EXTERNAL_OBSERVABILITY',
      `EXTERNAL_OBSERVABILITY=${JSON.stringify(observability)} is not allowed; use on or off`,
    );
  }

  return {
    apiKey,
    apiUrl: readUrl(env, 'API_URL', 'http://localhost:8080'),
    jobConcurrency: readInteger(env, 'JOB_CONCURRENCY', 1, { min: 1, max: 10 }),
    // A separate, much larger pool for uptime checks: they are network probes that mostly wait (a
    // response body is kept up to 256 KiB), with 30 s limits, and their schedule is tight. Sharing
    // the heavy pool would let one 4-minute browser check hold back every ping behind it. 200, not
    // 50: a slot is held for a check's whole latency, so 50 capped one agent below the rate its CPU
    // allows, and runs were shed with cores idle (BENCHMARKS.md, "Uptime slots").
    uptimeConcurrency: readInteger(env, 'UPTIME_CONCURRENCY', 200, { min: 1, max: 500 }),
    logLevel: readEnum(env, 'LOG_LEVEL', 'INFO', AGENT_LOG_LEVELS),
    // 0 binds an ephemeral port (tests); production uses 8081 as the reference agent does.
    healthPort: readInteger(env, 'AGENT_HEALTH_PORT', 8081, { min: 0, max: 65535 }),
    healthHost: readString(env, 'AGENT_HEALTH_HOST', '0.0.0.0'),
    proxy: {
      httpProxy: readProxyUrl(env, 'HTTP_PROXY'),
      httpsProxy: readProxyUrl(env, 'HTTPS_PROXY'),
      noProxy: readOptionalString(env, 'no_proxy') ?? readOptionalString(env, 'NO_PROXY'),
    },
    extraCaCerts,
    externalObservability: observability === undefined || observability.toLowerCase() === 'on',
    shutdownGraceSeconds: readInteger(env, 'SHUTDOWN_GRACE_SECONDS', 30, { min: 0, max: 3600 }),
    spoolDir: path.resolve(cwd, readString(env, 'SPOOL_DIR', './.outpost/spool')),
    spoolMaxBytes: readInteger(env, 'SPOOL_MAX_BYTES', DEFAULT_SPOOL_MAX_BYTES, {
      min: 64 * 1024,
      max: Number.MAX_SAFE_INTEGER,
    }),
    useOsDnsResolver: readBoolean(env, 'USE_OS_DNS_RESOLVER', false),
    runtimesDir: path.resolve(cwd, readString(env, 'RUNTIMES_DIR', defaultRuntimesDir())),
    sandboxPoolSize: readInteger(env, 'SANDBOX_POOL_SIZE', 2, { min: 0, max: 50 }),
    // The reference sizes an API check at ~150 MB; scripts that load several libraries need more
    // headroom than that, and the watchdog counts the whole process.
    sandboxMemoryMb: readInteger(env, 'SANDBOX_MEMORY_MB', 512, { min: 64, max: 16_384 }),
  };
}
