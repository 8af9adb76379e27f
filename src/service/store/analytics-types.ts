/**
 * Reads behind the analytics and reporting APIs (../analytics/, ../routes/analytics.ts,
 * ../routes/reporting.ts) and the retention deletes (../retention/). Figures come from the hourly
 * rollups (./repos/check-stats.ts); only non-aggregated queries read results, a page at a time.
 */

/** One hourly rollup row as stored: one check, hour, run location, outcome and HTTP status. */
export interface RollupRecord {
  checkId: string;
  /** Hours since the epoch (UTC). */
  hour: number;
  location: string;
  failed: boolean;
  statusCode: number;
  runs: number;
  failures: number;
  totalMs: number;
  minMs: number;
  maxMs: number;
  sqMs: number;
  retries: number;
  /** JSON texts, parsed by the caller that needs them (a reporting query skips `metrics`). */
  histogram: string;
  metrics: string;
}

/** What a report reads of a rollup row: no grouping keys, no metrics. */
export type ReportRollup = Pick<
  RollupRecord,
  'checkId' | 'hour' | 'runs' | 'failures' | 'totalMs' | 'minMs' | 'maxMs' | 'histogram'
>;

/** One stored FINAL result, as a non-aggregated analytics query shows it. */
export interface RawResultRecord {
  createdAt: string;
  location: string;
  attempts: number;
  payload: string;
}

export interface AnalyticsRepo {
  /** The rollups of one check of the account with hour in [fromHour, toHour). */
  rollupsOfCheck(accountId: string, checkId: string, fromHour: number, toHour: number): Promise<RollupRecord[]>;
  /** The rollups of every check of the account in [fromHour, toHour), only the columns a report needs. */
  rollupsOfAccount(accountId: string, fromHour: number, toHour: number): Promise<ReportRollup[]>;
  /** FINAL results of a check created in [fromIso, toIso), newest first, a page of them; `failed` filters on the outcome. */
  rawResults(
    accountId: string,
    checkId: string,
    window: { fromIso: string; toIso: string },
    page: { limit: number; offset: number; failed?: boolean },
  ): Promise<RawResultRecord[]>;
  /** A heartbeat check's events in [fromMs, toMs) counted per hour: received (on time or late) and failing. */
  heartbeatHours(
    accountId: string,
    checkId: string,
    fromMs: number,
    toMs: number,
  ): Promise<Array<{ hour: number; received: number; failing: number }>>;
}

export interface RetentionRepo {
  /** Deletes up to `limit` of the oldest results created before `beforeIso`; resolves to how many. */
  deleteResultsBefore(beforeIso: string, limit: number): Promise<number>;
  /** Check ids after `afterId` in id order, `limit` of them: the rollup sweep walks checks in pages. */
  checkIdsAfter(afterId: string, limit: number): Promise<string[]>;
  /** Deletes the rollups of these checks with hour < beforeHour; resolves to how many. */
  deleteRollupsBefore(checkIds: readonly string[], beforeHour: number): Promise<number>;
}
