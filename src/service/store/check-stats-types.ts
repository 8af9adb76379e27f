/**
 * Per-check statistics over a recent window (a dashboard's 24 hours): how many runs, how many
 * failed, and the response time's average and percentiles. See ./repos/check-stats.ts for how they
 * are kept cheap to read for hundreds of checks at once.
 */

/** One check's figures over the window; every time is in milliseconds, null when nothing ran. */
export interface CheckWindowStats {
  runs: number;
  failures: number;
  /** Percent of runs that passed (degraded counts as passing), 0-100; null without runs. */
  availability: number | null;
  avgMs: number | null;
  p50Ms: number | null;
  p95Ms: number | null;
  p99Ms: number | null;
}

/** What a stored result adds to its check's statistics. */
export interface StatsSample {
  accountId: string;
  checkId: string;
  atMs: number;
  failed: boolean;
  responseTimeMs: number;
  /** The run location's slug name: the rollup keeps figures per location (absent: ''). */
  location?: string;
  /** The HTTP status of an API-like result, 0 (or absent) for the others. */
  statusCode?: number;
  /** Tries before this result that were retried (attempts - 1). */
  retries?: number;
  /** The result's other measured metrics by analytics name (../analytics/catalog.ts): timing phases and the like. */
  metrics?: Record<string, number>;
}

export interface CheckStatsRepo {
  /**
   * The figures of each of `checkIds` (of the account) over the last 24 hours before `nowMs`. A
   * check with no runs in the window is absent from the map.
   */
  forChecks(accountId: string, checkIds: readonly string[], nowMs: number): Promise<Map<string, CheckWindowStats>>;
}

/** How many changes to what dashboards show this process has made for an account (results, statuses). */
export interface AccountChangeCount {
  of(accountId: string): number;
}
