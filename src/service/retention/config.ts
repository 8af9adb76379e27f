/**
 * How long stored data is kept (README "Service" table, docs/operations.md "Retention"): raw check
 * results RESULT_RETENTION_DAYS (default 30), the hourly rollups that analytics, reporting and
 * dashboards read ROLLUP_RETENTION_MONTHS (default 13). Rollups must outlive results: analytics of a
 * window older than the raw results is read from them.
 */
import { type Env, readInteger } from '../../shared/env.ts';
import { ConfigError } from '../../shared/errors.ts';

export interface RetentionConfig {
  resultDays: number;
  rollupMonths: number;
}

export const DEFAULT_RETENTION: RetentionConfig = { resultDays: 30, rollupMonths: 13 };

export function loadRetentionConfig(env: Env): RetentionConfig {
  const resultDays = readInteger(env, 'RESULT_RETENTION_DAYS', DEFAULT_RETENTION.resultDays, { min: 1, max: 3650 });
  const rollupMonths = readInteger(env, 'ROLLUP_RETENTION_MONTHS', DEFAULT_RETENTION.rollupMonths, {
    min: 1,
    max: 120,
  });
  if (rollupMonths * 31 < resultDays) {
    throw new ConfigError(
      'ROLLUP_RETENTION_MONTHS',
      `ROLLUP_RETENTION_MONTHS=${rollupMonths} keeps rollups for less time than RESULT_RETENTION_DAYS=${resultDays} keeps results; use at least ${Math.ceil(resultDays / 31)}`,
    );
  }
  return { resultDays, rollupMonths };
}
