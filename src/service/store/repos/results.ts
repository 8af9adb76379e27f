import type { RunResult } from '../../../shared/protocol.ts';
import { measuredMetrics, statusCodeOf } from '../../analytics/catalog.ts';
import { BadRequestError } from '../../http/errors.ts';
import type { StatsSample } from '../check-stats-types.ts';
import { type Dialect, nowIso, type SqlDatabase } from '../sql/database.ts';
import { dialectSql } from '../sql/dialect-sql.ts';
import type { NewResult, RecentResult, ResultRepo, StatusPendingResult, StoredResult } from '../store.ts';
import { timeOrderedId } from '../time-ordered-id.ts';

/**
 * A stored result plus its row sequence. The sequence is monotonic per database, so the public API
 * uses it as the numeric `checkRunId` and as the paging key.
 */
export interface SequencedResult extends StoredResult {
  sequence: number;
}

interface ResultRow {
  seq: number;
  id: string;
  account_id: string;
  check_id: string;
  run_id: string;
  check_name: string;
  location_id: string;
  run_location: string;
  attempts: number;
  result_type: string;
  created_at: string;
  payload: string;
}

interface RecentRow {
  id: string;
  check_id: string;
  created_at: string;
  response_time: number | null;
  has_failures: number;
  has_errors: number;
  is_degraded: number;
}

const COLUMNS =
  'seq, id, account_id, check_id, run_id, check_name, location_id, run_location, attempts, result_type, created_at, payload';

/** A check's results newest first, before a sequence number; `byType` adds a result_type filter. */
export const listOfCheck = (byType: boolean) =>
  `SELECT ${COLUMNS} FROM results
   WHERE account_id = ? AND check_id = ? ${byType ? 'AND result_type = ?' : ''} AND seq < ? ORDER BY seq DESC LIMIT ?`;

/** The newest FINAL results of every check of an account, `$perCheck` each. */
export function recentOfChecks(dialect: Dialect): string {
  const { jsonNumber, jsonFlag } = dialectSql(dialect);
  // Per check through the (check_id, seq) index, newest first: a long history costs no more than
  // a short one (the few ATTEMPT results are skipped on the row).
  return `SELECT r.id, r.check_id, r.created_at,
         ${jsonNumber('r.payload', 'responseTime')} AS response_time, ${jsonFlag('r.payload', 'hasFailures')} AS has_failures,
         ${jsonFlag('r.payload', 'hasErrors')} AS has_errors, ${jsonFlag('r.payload', 'isDegraded')} AS is_degraded
       FROM checks c JOIN results r ON r.seq IN (
         SELECT seq FROM results WHERE account_id = c.account_id AND check_id = c.id AND result_type = 'FINAL' ORDER BY seq DESC LIMIT $perCheck)
       WHERE c.account_id = $accountId ORDER BY r.check_id, r.seq DESC`;
}

const toResult = (row: ResultRow): SequencedResult => ({
  sequence: row.seq,
  id: row.id,
  accountId: row.account_id,
  checkId: row.check_id,
  runId: row.run_id,
  checkName: row.check_name,
  locationId: row.location_id,
  runLocation: row.run_location,
  attempts: row.attempts,
  resultType: row.result_type === 'ATTEMPT' ? 'ATTEMPT' : 'FINAL',
  createdAt: row.created_at,
  payload: JSON.parse(row.payload) as RunResult,
});

/**
 * The cursor is the sequence of the last row of a page, base64url-encoded so clients treat it as
 * opaque and we may change what is inside without breaking them.
 */
export function encodeCursor(sequence: number): string {
  return Buffer.from(`r:${sequence}`, 'utf8').toString('base64url');
}

export function decodeCursor(cursor: string): number {
  const match = /^r:(\d{1,15})$/.exec(Buffer.from(cursor, 'base64url').toString('utf8'));
  if (!match?.[1]) throw new BadRequestError('querystring/nextId is not a cursor returned by this service');
  return Number(match[1]);
}

/** Where a stored FINAL result is counted into its check's statistics (./check-stats.ts). */
export interface StatsRecorder {
  record(sample: StatsSample): Promise<void>;
}

export class SqlResultRepo implements ResultRepo {
  readonly #db: SqlDatabase;
  readonly #stats: StatsRecorder | undefined;
  constructor(db: SqlDatabase, stats?: StatsRecorder) {
    this.#db = db;
    this.#stats = stats;
  }

  async insertOnce(result: NewResult): Promise<{ status: 'stored' | 'duplicate'; id: string }> {
    const id = timeOrderedId();
    const createdAt = result.createdAt ?? nowIso();
    // ON CONFLICT DO NOTHING on the unique run_id index: whichever insert commits first wins, the
    // other becomes a no-op, with no read-then-write window between connections.
    const inserted = await this.#db.transaction(async () => {
      const { changes } = await this.#db.run(
        `INSERT INTO results (id, account_id, check_id, run_id, check_name, location_id, run_location, attempts, result_type, created_at, payload)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (run_id) DO NOTHING`,
        [
          id,
          result.accountId,
          result.checkId,
          result.runId,
          result.checkName,
          result.locationId,
          result.runLocation,
          result.attempts,
          result.resultType ?? 'FINAL',
          createdAt,
          JSON.stringify(result.payload),
        ],
      );
      if (changes > 0 && result.pendingStatus) {
        await this.#db.run('INSERT INTO results_status_pending (result_id, due_at) VALUES (?, ?)', [
          id,
          result.pendingStatus.dueAt,
        ]);
      }
      if (changes > 0) await this.#countInStats(result, Date.parse(createdAt));
      return changes > 0;
    });
    if (inserted) return { status: 'stored', id };
    const existing = await this.#db.get<{ id: string }>('SELECT id FROM results WHERE run_id = ?', [result.runId]);
    if (!existing) throw new Error(`result for run ${result.runId} conflicted but cannot be found`);
    return { status: 'duplicate', id: existing.id };
  }

  /**
   * A retried ATTEMPT or a cancelled run says nothing about the check's availability. A result without a
   * response time (the protocol requires one; older or hand-made rows may lack it) is left out of the
   * figures rather than fail the insert: the result itself must be stored.
   */
  async #countInStats(result: NewResult, atMs: number): Promise<void> {
    if (result.resultType === 'ATTEMPT' || result.payload.isCancelled) return;
    if (!Number.isFinite(result.payload.responseTime)) return;
    await this.#stats?.record({
      accountId: result.accountId,
      checkId: result.checkId,
      atMs,
      failed: result.payload.hasFailures || result.payload.hasErrors,
      responseTimeMs: result.payload.responseTime,
      // What the analytics API groups and aggregates by, folded into the same rollup row.
      location: result.runLocation,
      statusCode: statusCodeOf(result.payload),
      retries: Math.max(0, result.attempts - 1),
      metrics: measuredMetrics(result.payload),
    });
  }

  async listStatusPending(opts: {
    limit: number;
    afterSequence?: number;
    storedBefore?: string;
  }): Promise<StatusPendingResult[]> {
    const rows = await this.#db.all<ResultRow & { due_at: string }>(
      `SELECT r.*, p.due_at FROM results_status_pending p JOIN results r ON r.id = p.result_id
       WHERE r.seq > ? AND r.created_at < ? ORDER BY r.seq LIMIT ?`,
      [opts.afterSequence ?? 0, opts.storedBefore ?? '9999', opts.limit],
    );
    return rows.map((row) => ({ ...toResult(row), dueAt: row.due_at }));
  }

  async get(accountId: string, checkId: string, resultId: string): Promise<SequencedResult | undefined> {
    const row = await this.#db.get<ResultRow>(
      `SELECT ${COLUMNS} FROM results WHERE id = ? AND account_id = ? AND check_id = ?`,
      [resultId, accountId, checkId],
    );
    return row ? toResult(row) : undefined;
  }

  async list(
    accountId: string,
    checkId: string,
    opts: { limit: number; nextId?: string; resultType?: 'FINAL' | 'ATTEMPT' | 'ALL' },
  ): Promise<{ entries: SequencedResult[]; nextId: string | null }> {
    const before = opts.nextId ? decodeCursor(opts.nextId) : Number.MAX_SAFE_INTEGER;
    const byType = opts.resultType !== undefined && opts.resultType !== 'ALL';
    // One row more than asked tells whether another page exists without a second COUNT query.
    const rows = await this.#db.all<ResultRow>(listOfCheck(byType), [
      accountId,
      checkId,
      ...(byType ? [opts.resultType as string] : []),
      before,
      opts.limit + 1,
    ]);
    const page = rows.slice(0, opts.limit).map(toResult);
    const last = page.at(-1);
    return { entries: page, nextId: rows.length > opts.limit && last ? encodeCursor(last.sequence) : null };
  }

  async recentByCheck(accountId: string, perCheck: number): Promise<RecentResult[]> {
    const rows = await this.#db.all<RecentRow>(recentOfChecks(this.#db.dialect), { accountId, perCheck });
    return rows.map((row) => ({
      id: row.id,
      checkId: row.check_id,
      createdAt: row.created_at,
      responseTime: row.response_time ?? 0,
      hasFailures: row.has_failures === 1,
      hasErrors: row.has_errors === 1,
      isDegraded: row.is_degraded === 1,
    }));
  }

  async countForRun(runId: string): Promise<number> {
    return (await this.#db.get<{ n: number }>('SELECT COUNT(*) AS n FROM results WHERE run_id = ?', [runId]))?.n ?? 0;
  }
}
