/** The service's settings for Playwright check suites (README lists the variables). */
import path from 'node:path';
import { type Env, readInteger } from '../../shared/env.ts';
import { DEFAULT_SUITE_GLOBAL_TIMEOUT_MS } from '../../shared/checks/types.ts';

export interface SuiteServiceConfig {
  /** DATA_DIR/suites: archives, one file per account and SHA-256. */
  dir: string;
  /** SUITE_BUNDLE_MAX_BYTES: the largest archive accepted (the agent applies the same default). */
  bundleMaxBytes: number;
  /** SUITE_UNPACKED_MAX_BYTES and SUITE_MAX_ENTRIES: what an archive may unpack to. */
  unpackedMaxBytes: number;
  maxEntries: number;
  /** PLAYWRIGHT_MAX_GLOBAL_TIMEOUT_SECONDS: the largest globalTimeout a suite may ask for. */
  maxGlobalTimeoutSeconds: number;
}

export function loadSuiteServiceConfig(env: Env, dataDir: string): SuiteServiceConfig {
  return {
    dir: path.join(dataDir, 'suites'),
    bundleMaxBytes: readInteger(env, 'SUITE_BUNDLE_MAX_BYTES', 50 * 1024 * 1024, {
      min: 1024,
      max: 1024 * 1024 * 1024,
    }),
    unpackedMaxBytes: readInteger(env, 'SUITE_UNPACKED_MAX_BYTES', 200 * 1024 * 1024, {
      min: 1024,
      max: Number.MAX_SAFE_INTEGER,
    }),
    maxEntries: readInteger(env, 'SUITE_MAX_ENTRIES', 10_000, { min: 1, max: 1_000_000 }),
    maxGlobalTimeoutSeconds: readInteger(
      env,
      'PLAYWRIGHT_MAX_GLOBAL_TIMEOUT_SECONDS',
      DEFAULT_SUITE_GLOBAL_TIMEOUT_MS / 1000,
      { min: 1, max: 7 * 24 * 3600 },
    ),
  };
}
