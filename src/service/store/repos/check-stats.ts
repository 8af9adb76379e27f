/**
 * Per-check statistics over the last 24 hours, for dashboards of hundreds of checks.
 *
 * Why rollups plus a cache: percentiles straight from `results` mean reading every result of the day
 * (500 checks every minute is 720,000 rows), far beyond a page's budget. Instead each stored result
 * adds to its check's row for that hour in `check_stats_hourly` (runs, failures, summed, fastest and
 * slowest time and a response-time histogram, ../response-histogram.ts), in the transaction that stores it; since
 * migration 032 a row is per run location, outcome and HTTP status too, and carries what the analytics API
 * reads (../../analytics/). A read merges
 * at most 24 rows per check; the merged figures are kept in memory per check until a result of that
 * check is stored, the hour turns, or a minute passes (a result stored by another process), so a
 * dashboard refresh of 500 unchanged checks reads nothing from the database. The window is the
 * current hour and the 23 before it: between 23 and 24 hours. Percentiles are within ~4.5 %.
 */
import type { CheckStatsRepo, CheckWindowStats, StatsSample } from '../check-stats-types.ts';
import { addValues, type MetricSummaries } from '../metric-summary.ts';
import { addTo, type Histogram, mergeInto, percentiles } from '../response-histogram.ts';
import type { SqlDatabase } from '../sql/database.ts';
import { dialectSql } from '../sql/dialect-sql.ts';
import type { AccountChanges } from './account-changes.ts';

const HOUR_MS = 3_600_000;
const WINDOW_HOURS = 24;
/** Migration 018's backfill pruned rows older than this as it wrote; retention does it since 032. */
const KEEP_HOURS = 48;
const CACHE_MS = 60_000;

interface RollupRow {
  runs: number;
  failures: number;
  total_ms: number;
  min_ms: number;
  max_ms: number;
  histogram: string;
}

const ROLLUP_COLUMNS = 'runs, failures, total_ms, min_ms, max_ms, histogram';

/**
 * Adds one result to its check's hourly rollup in the layout of migration 018 (one row per check and
 * hour), for that migration's backfill only: the service writes with addToRollup.
 */
export async function addRollup(db: Pick<SqlDatabase, 'dialect' | 'get' | 'run'>, sample: StatsSample): Promise<void> {
  const hour = Math.floor(sample.atMs / HOUR_MS);
  const existing = await db.get<RollupRow>(
    `SELECT ${ROLLUP_COLUMNS} FROM check_stats_hourly WHERE check_id = ? AND hour = ?`,
    [sample.checkId, hour],
  );
  const histogram = existing ? (JSON.parse(existing.histogram) as Histogram) : {};
  addTo(histogram, sample.responseTimeMs);
  const { least, greatest } = dialectSql(db.dialect);
  await db.run(
    `INSERT INTO check_stats_hourly (check_id, hour, account_id, runs, failures, total_ms, min_ms, max_ms, histogram)
     VALUES (?, ?, ?, 1, ?, ?, ?, ?, ?)
     ON CONFLICT (check_id, hour) DO UPDATE SET runs = check_stats_hourly.runs + 1, failures = check_stats_hourly.failures + excluded.failures,
       total_ms = check_stats_hourly.total_ms + excluded.total_ms, min_ms = ${least('check_stats_hourly.min_ms', 'excluded.min_ms')},
       max_ms = ${greatest('check_stats_hourly.max_ms', 'excluded.max_ms')}, histogram = excluded.histogram`,
    [
      sample.checkId,
      hour,
      sample.accountId,
      sample.failed ? 1 : 0,
      sample.responseTimeMs,
      sample.responseTimeMs,
      sample.responseTimeMs,
      JSON.stringify(histogram),
    ],
  );
  // Rows fall out of the window only when a new hour begins, which is when its row is first written.
  if (!existing)
    await db.run('DELETE FROM check_stats_hourly WHERE check_id = ? AND hour < ?', [sample.checkId, hour - KEEP_HOURS]);
}

const KEY = 'check_id = ? AND hour = ? AND location = ? AND failed = ? AND status_code = ?';

/**
 * Adds one result to its hourly rollup row (check, hour, location, failed, status code) inside the
 * caller's transaction: a read of the row's histograms and one upsert, the same two statements per
 * result as before the analytics columns. Old rows are deleted by the retention job, not here.
 */
export async function addToRollup(
  db: Pick<SqlDatabase, 'dialect' | 'get' | 'run'>,
  sample: StatsSample,
): Promise<void> {
  const hour = Math.floor(sample.atMs / HOUR_MS);
  const key = [sample.checkId, hour, sample.location ?? '', sample.failed ? 1 : 0, sample.statusCode ?? 0];
  const existing = await db.get<{ histogram: string; metrics: string }>(
    `SELECT histogram, metrics FROM check_stats_hourly WHERE ${KEY}`,
    key,
  );
  const histogram = existing ? (JSON.parse(existing.histogram) as Histogram) : {};
  addTo(histogram, sample.responseTimeMs);
  const metrics = existing ? (JSON.parse(existing.metrics) as MetricSummaries) : {};
  addValues(metrics, sample.metrics ?? {});
  const { least, greatest } = dialectSql(db.dialect);
  const t = 'check_stats_hourly';
  const ms = sample.responseTimeMs;
  await db.run(
    `INSERT INTO ${t} (check_id, hour, location, failed, status_code, account_id, runs, failures, total_ms, min_ms, max_ms, sq_ms, retries, histogram, metrics)
     VALUES (?, ?, ?, ?, ?, ?, 1, ?, ?, ?, ?, ?, ?, ?, ?)
     ON CONFLICT (check_id, hour, location, failed, status_code) DO UPDATE SET runs = ${t}.runs + 1, failures = ${t}.failures + excluded.failures,
       total_ms = ${t}.total_ms + excluded.total_ms, min_ms = ${least(`${t}.min_ms`, 'excluded.min_ms')}, max_ms = ${greatest(`${t}.max_ms`, 'excluded.max_ms')},
       sq_ms = ${t}.sq_ms + excluded.sq_ms, retries = ${t}.retries + excluded.retries, histogram = excluded.histogram, metrics = excluded.metrics`,
    [
      ...key,
      sample.accountId,
      sample.failed ? 1 : 0,
      ms,
      ms,
      ms,
      ms * ms,
      sample.retries ?? 0,
      JSON.stringify(histogram),
      JSON.stringify(metrics),
    ],
  );
}

/** The figures of a set of hourly rows, or undefined when none ran. */
export function summarize(rows: readonly RollupRow[]): CheckWindowStats | undefined {
  let runs = 0;
  let failures = 0;
  let totalMs = 0;
  let minMs = Number.POSITIVE_INFINITY;
  let maxMs = 0;
  const histogram: Histogram = {};
  for (const row of rows) {
    runs += row.runs;
    failures += row.failures;
    totalMs += row.total_ms;
    minMs = Math.min(minMs, row.min_ms);
    maxMs = Math.max(maxMs, row.max_ms);
    mergeInto(histogram, JSON.parse(row.histogram) as Histogram);
  }
  if (runs === 0) return undefined;
  // A bucket's middle can lie outside what was measured (one run of 900 ms would read 899): clamp.
  const [p50Ms = null, p95Ms = null, p99Ms = null] = percentiles(histogram, runs, [50, 95, 99]).map((p) =>
    Math.round(Math.min(maxMs, Math.max(minMs, p))),
  );
  return {
    runs,
    failures,
    availability: ((runs - failures) / runs) * 100,
    avgMs: Math.round(totalMs / runs),
    p50Ms,
    p95Ms,
    p99Ms,
  };
}

interface CacheEntry {
  firstHour: number;
  cachedAtMs: number;
  stats: CheckWindowStats | undefined;
}

export class SqlCheckStatsRepo implements CheckStatsRepo {
  readonly #db: SqlDatabase;
  readonly #cache = new Map<string, CacheEntry>();
  readonly #changes: AccountChanges;

  constructor(db: SqlDatabase, changes: AccountChanges) {
    this.#db = db;
    this.#changes = changes;
  }

  /** Called by the result repository inside the transaction that stores a counted result. */
  async record(sample: StatsSample): Promise<void> {
    await addToRollup(this.#db, sample);
    this.#cache.delete(`${sample.accountId}/${sample.checkId}`);
    this.#changes.bump(sample.accountId);
  }

  async forChecks(
    accountId: string,
    checkIds: readonly string[],
    nowMs: number,
  ): Promise<Map<string, CheckWindowStats>> {
    const firstHour = Math.floor(nowMs / HOUR_MS) - (WINDOW_HOURS - 1);
    const out = new Map<string, CheckWindowStats>();
    for (const checkId of checkIds) {
      const stats = await this.#cached(accountId, checkId, firstHour, nowMs);
      if (stats) out.set(checkId, stats);
    }
    return out;
  }

  async #cached(
    accountId: string,
    checkId: string,
    firstHour: number,
    nowMs: number,
  ): Promise<CheckWindowStats | undefined> {
    // Keyed by account too: a check id from another account must never read this one's entry.
    const key = `${accountId}/${checkId}`;
    const hit = this.#cache.get(key);
    if (hit && hit.firstHour === firstHour && nowMs - hit.cachedAtMs < CACHE_MS) return hit.stats;
    const rows = await this.#db.all<RollupRow>(
      `SELECT ${ROLLUP_COLUMNS} FROM check_stats_hourly WHERE check_id = ? AND account_id = ? AND hour >= ?`,
      [checkId, accountId, firstHour],
    );
    const stats = summarize(rows);
    this.#cache.set(key, { firstHour, cachedAtMs: nowMs, stats });
    return stats;
  }
}
