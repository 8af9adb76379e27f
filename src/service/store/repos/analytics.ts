/**
 * The analytics and reporting reads (../analytics-types.ts) and the retention deletes. Rollup reads
 * go through the primary key (one check) or the (account_id, hour) index (every check of an
 * account); numbers are passed through Number() because PostgreSQL hands BIGINT columns back as text.
 */
import type { AnalyticsRepo, RawResultRecord, ReportRollup, RetentionRepo, RollupRecord } from '../analytics-types.ts';
import type { SqlDatabase } from '../sql/database.ts';
import { dialectSql } from '../sql/dialect-sql.ts';

const HOUR_MS = 3_600_000;
const BASE =
  'check_id, hour, location, failed, status_code, runs, failures, total_ms, min_ms, max_ms, sq_ms, retries, histogram';

type Row = Record<string, unknown>;

const toRollup = (row: Row): RollupRecord => ({
  checkId: String(row.check_id),
  hour: Number(row.hour),
  location: String(row.location),
  failed: Number(row.failed) === 1,
  statusCode: Number(row.status_code),
  runs: Number(row.runs),
  failures: Number(row.failures),
  totalMs: Number(row.total_ms),
  minMs: Number(row.min_ms),
  maxMs: Number(row.max_ms),
  sqMs: Number(row.sq_ms),
  retries: Number(row.retries),
  histogram: String(row.histogram),
  metrics: typeof row.metrics === 'string' ? row.metrics : '{}',
});

export class SqlAnalyticsRepo implements AnalyticsRepo, RetentionRepo {
  readonly #db: SqlDatabase;

  constructor(db: SqlDatabase) {
    this.#db = db;
  }

  async rollupsOfCheck(accountId: string, checkId: string, fromHour: number, toHour: number): Promise<RollupRecord[]> {
    // The account is checked on the row: through (account_id, hour) SQLite would read every check's hours.
    const { noIndex } = dialectSql(this.#db.dialect);
    const rows = await this.#db.all<Row>(
      `SELECT ${BASE}, metrics FROM check_stats_hourly WHERE check_id = ? AND ${noIndex('account_id')} = ? AND hour >= ? AND hour < ?`,
      [checkId, accountId, fromHour, toHour],
    );
    return rows.map(toRollup);
  }

  async rollupsOfAccount(accountId: string, fromHour: number, toHour: number): Promise<ReportRollup[]> {
    // Tens of thousands of rows for a week of a large account: only the columns a report merges.
    const rows = await this.#db.all<Row>(
      'SELECT check_id, hour, runs, failures, total_ms, min_ms, max_ms, histogram FROM check_stats_hourly WHERE account_id = ? AND hour >= ? AND hour < ?',
      [accountId, fromHour, toHour],
    );
    return rows.map((row) => ({
      checkId: String(row.check_id),
      hour: Number(row.hour),
      runs: Number(row.runs),
      failures: Number(row.failures),
      totalMs: Number(row.total_ms),
      minMs: Number(row.min_ms),
      maxMs: Number(row.max_ms),
      histogram: String(row.histogram),
    }));
  }

  async rawResults(
    accountId: string,
    checkId: string,
    window: { fromIso: string; toIso: string },
    page: { limit: number; offset: number; failed?: boolean },
  ): Promise<RawResultRecord[]> {
    const { jsonFlag, noIndex } = dialectSql(this.#db.dialect);
    const failed = `(COALESCE(${jsonFlag('payload', 'hasFailures')}, 0) = 1 OR COALESCE(${jsonFlag('payload', 'hasErrors')}, 0) = 1)`;
    const outcome = page.failed === undefined ? '' : page.failed ? `AND ${failed}` : `AND NOT ${failed}`;
    // Through the (check_id, seq) index newest first; account, window and outcome are checked on the
    // row (through (account_id, created_at) SQLite would read and sort every check's results).
    const rows = await this.#db.all<Row>(
      `SELECT created_at, run_location, attempts, payload FROM results
       WHERE check_id = ? AND ${noIndex('account_id')} = ? AND result_type = 'FINAL' AND created_at >= ? AND created_at < ? ${outcome}
       ORDER BY seq DESC LIMIT ? OFFSET ?`,
      [checkId, accountId, window.fromIso, window.toIso, page.limit, page.offset],
    );
    return rows.map((r) => ({
      createdAt: String(r.created_at),
      location: String(r.run_location),
      attempts: Number(r.attempts),
      payload: String(r.payload),
    }));
  }

  async heartbeatHours(accountId: string, checkId: string, fromMs: number, toMs: number) {
    // A ping that came late still came: it counts as received; FAILING is the missed deadline.
    const rows = await this.#db.all<Row>(
      `SELECT at_ms / ${HOUR_MS} AS hour, SUM(CASE WHEN state = 'FAILING' THEN 0 ELSE 1 END) AS received,
              SUM(CASE WHEN state = 'FAILING' THEN 1 ELSE 0 END) AS failing
       FROM heartbeat_events WHERE check_id = ? AND account_id = ? AND at_ms >= ? AND at_ms < ? GROUP BY at_ms / ${HOUR_MS}`,
      [checkId, accountId, fromMs, toMs],
    );
    return rows.map((r) => ({ hour: Number(r.hour), received: Number(r.received), failing: Number(r.failing) }));
  }

  async deleteResultsBefore(beforeIso: string, limit: number): Promise<number> {
    // The oldest rows by seq (the primary key), so no index on created_at is needed: results are
    // stored in time order, and a batch whose first rows are not yet old enough deletes none of them.
    const { changes } = await this.#db.run(
      `DELETE FROM results WHERE seq IN (SELECT seq FROM (SELECT seq, created_at FROM results ORDER BY seq LIMIT ?) oldest WHERE created_at < ?)`,
      [limit, beforeIso],
    );
    return changes;
  }

  async checkIdsAfter(afterId: string, limit: number): Promise<string[]> {
    const rows = await this.#db.all<{ id: string }>('SELECT id FROM checks WHERE id > ? ORDER BY id LIMIT ?', [
      afterId,
      limit,
    ]);
    return rows.map((r) => r.id);
  }

  async deleteRollupsBefore(checkIds: readonly string[], beforeHour: number): Promise<number> {
    if (checkIds.length === 0) return 0;
    const d = dialectSql(this.#db.dialect);
    const { changes } = await this.#db.run(
      `DELETE FROM check_stats_hourly WHERE check_id IN (${d.jsonArrayValues('$ids')}) AND hour < $before`,
      {
        ids: JSON.stringify(checkIds),
        before: beforeHour,
      },
    );
    return changes;
  }
}
