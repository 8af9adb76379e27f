/**
 * What the Playwright check suite runner reads from the agent's environment (README lists each
 * variable; docs/suites.md explains them). Read once, lazily, the first time a suite runs: an agent
 * that never runs suites never needs any of it.
 */
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { type Env, readBoolean, readInteger, readOptionalString, readString } from '../../shared/env.ts';

export interface SuiteProxy {
  httpProxy: string | undefined;
  httpsProxy: string | undefined;
  noProxy: string | undefined;
}

export interface SuiteRunnerConfig {
  /** SUITE_ENGINES_DIR: the npm project holding Node 22/24/26, Bun, npm, pnpm and Yarn (runtimes/suite-engines). */
  enginesDir: string;
  /** CHROMIUM_PATH: the browser every suite uses; nothing downloads one. */
  chromiumPath: string;
  /** FFMPEG_PATH: the ffmpeg Playwright records videos with, linked into the browsers folder. */
  ffmpegPath: string;
  /** PLAYWRIGHT_BROWSERS_CACHE_DIR: one Playwright browsers folder per Playwright version, kept across runs. */
  browsersCacheDir: string;
  /** DEPENDENCY_CACHE=on: keep installed node_modules keyed by the lockfile's hash. */
  dependencyCache: boolean;
  /** DEPENDENCY_CACHE_DIR. */
  dependencyCacheDir: string;
  /** DEPENDENCY_CACHE_MAX_ENTRIES: the oldest entries beyond it are removed. */
  dependencyCacheMaxEntries: number;
  /** Where job folders are made (mode 0700), one per run, removed afterwards. */
  jobsRoot: string;
  /** SUITE_BUNDLE_MAX_BYTES / SUITE_UNPACKED_MAX_BYTES / SUITE_MAX_ENTRIES: archive caps. */
  bundleMaxBytes: number;
  unpackedMaxBytes: number;
  maxEntries: number;
  /** SUITE_LOG_MAX_BYTES: the user-visible log kept per run. */
  logMaxBytes: number;
  /** SUITE_CANCEL_GRACE_MS: after SIGINT, how long the reporter may take to flush before SIGTERM/SIGKILL. */
  cancelGraceMs: number;
  /** The agent's proxy (HTTP_PROXY, HTTPS_PROXY, NO_PROXY): given to the dependency install only. */
  proxy: SuiteProxy;
  /** NODE_EXTRA_CA_CERTS of the agent: given to the install too (TLS-intercepting proxies). */
  extraCaCerts: string | undefined;
  /** The service, for downloading code bundles (API_URL and API_KEY of the agent). */
  apiUrl: string | undefined;
  apiKey: string | undefined;
}

/** `<package root>/runtimes/suite-engines` (this file is src/agent/suites/config.ts). */
export function defaultEnginesDir(): string {
  return path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..', '..', 'runtimes', 'suite-engines');
}

function proxyVar(env: Env, upper: string): string | undefined {
  return readOptionalString(env, upper.toLowerCase()) ?? readOptionalString(env, upper);
}

export function loadSuiteRunnerConfig(env: Env, cwd: string = process.cwd()): SuiteRunnerConfig {
  const tmp = os.tmpdir();
  return {
    enginesDir: path.resolve(cwd, readString(env, 'SUITE_ENGINES_DIR', defaultEnginesDir())),
    chromiumPath: readString(env, 'CHROMIUM_PATH', '/usr/bin/chromium'),
    ffmpegPath: readString(env, 'FFMPEG_PATH', '/usr/bin/ffmpeg'),
    browsersCacheDir: path.resolve(
      cwd,
      readString(env, 'PLAYWRIGHT_BROWSERS_CACHE_DIR', path.join(tmp, 'outpost-playwright-browsers')),
    ),
    dependencyCache: readBoolean(env, 'DEPENDENCY_CACHE', false),
    dependencyCacheDir: path.resolve(
      cwd,
      readString(env, 'DEPENDENCY_CACHE_DIR', path.join(tmp, 'outpost-dependency-cache')),
    ),
    dependencyCacheMaxEntries: readInteger(env, 'DEPENDENCY_CACHE_MAX_ENTRIES', 20, { min: 1, max: 10_000 }),
    jobsRoot: path.join(tmp, 'outpost-suites'),
    bundleMaxBytes: readInteger(env, 'SUITE_BUNDLE_MAX_BYTES', 50 * 1024 * 1024, {
      min: 1024,
      max: Number.MAX_SAFE_INTEGER,
    }),
    unpackedMaxBytes: readInteger(env, 'SUITE_UNPACKED_MAX_BYTES', 200 * 1024 * 1024, {
      min: 1024,
      max: Number.MAX_SAFE_INTEGER,
    }),
    maxEntries: readInteger(env, 'SUITE_MAX_ENTRIES', 10_000, { min: 1, max: 1_000_000 }),
    logMaxBytes: readInteger(env, 'SUITE_LOG_MAX_BYTES', 512 * 1024, { min: 1024, max: 64 * 1024 * 1024 }),
    cancelGraceMs: readInteger(env, 'SUITE_CANCEL_GRACE_MS', 3_000, { min: 0, max: 60_000 }),
    proxy: {
      httpProxy: proxyVar(env, 'HTTP_PROXY'),
      httpsProxy: proxyVar(env, 'HTTPS_PROXY'),
      noProxy: proxyVar(env, 'NO_PROXY'),
    },
    extraCaCerts: readOptionalString(env, 'NODE_EXTRA_CA_CERTS'),
    apiUrl: readOptionalString(env, 'API_URL'),
    apiKey: readOptionalString(env, 'API_KEY'),
  };
}
