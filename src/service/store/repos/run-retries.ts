import type { PendingRetry, RunRetryLink, RunRetryRepo } from '../check-group-types.ts';
import { nowIso, READ_COMMITTED, type SqlDatabase } from '../sql/database.ts';
import { dialectSql } from '../sql/dialect-sql.ts';

interface PendingRow {
  retry_of: string;
  account_id: string;
  check_id: string;
  location_id: string;
  attempt: number;
  chain_started_at: string;
  due_at: string;
}

const toPending = (row: PendingRow): PendingRetry => ({
  retryOf: row.retry_of,
  accountId: row.account_id,
  checkId: row.check_id,
  locationId: row.location_id,
  attempt: row.attempt,
  chainStartedAt: row.chain_started_at,
  dueAt: row.due_at,
});

/** The retry-chain columns of a runs row. */
export interface RetryLinkColumns {
  retry_of: string | null;
  attempt: number | null;
  chain_started_at: string | null;
}

/** A run's place in its retry chain; a run outside any chain (or not found) is attempt 1 of none. */
export function retryLinkOf(row: RetryLinkColumns | undefined): RunRetryLink {
  return {
    retryOf: row?.retry_of ?? null,
    attempt: row?.attempt ?? 1,
    chainStartedAt: row?.chain_started_at ?? null,
  };
}

/** Retry columns of runs (added by migration 005) and the pending_retries table. */
export class SqlRunRetryRepo implements RunRetryRepo {
  readonly #db: SqlDatabase;
  readonly #takeDue: string;

  constructor(db: SqlDatabase) {
    this.#db = db;
    // Taking is one statement that locks what it takes and skips what another replica is taking, so
    // a due retry is handed to exactly one sweep.
    this.#takeDue = `
      WITH due AS MATERIALIZED (
        SELECT retry_of FROM pending_retries WHERE due_at <= ? ORDER BY due_at LIMIT ? ${dialectSql(db.dialect).forUpdateSkipLocked})
      DELETE FROM pending_retries WHERE retry_of IN (SELECT retry_of FROM due)
      RETURNING *`;
  }

  async linkOf(runId: string): Promise<RunRetryLink> {
    return retryLinkOf(
      await this.#db.get<RetryLinkColumns>('SELECT retry_of, attempt, chain_started_at FROM runs WHERE run_id = ?', [
        runId,
      ]),
    );
  }

  async setLink(runId: string, link: RunRetryLink): Promise<void> {
    await this.#db.run('UPDATE runs SET retry_of = ?, attempt = ?, chain_started_at = ? WHERE run_id = ?', [
      link.retryOf,
      link.attempt,
      link.chainStartedAt,
      runId,
    ]);
  }

  async plan(retry: PendingRetry): Promise<boolean> {
    const result = await this.#db.run(
      `INSERT INTO pending_retries (retry_of, account_id, check_id, location_id, attempt, chain_started_at, due_at, created_at)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (retry_of) DO NOTHING`,
      [
        retry.retryOf,
        retry.accountId,
        retry.checkId,
        retry.locationId,
        retry.attempt,
        retry.chainStartedAt,
        retry.dueAt,
        nowIso(),
      ],
    );
    return result.changes > 0;
  }

  async takeDue(now: string, limit: number): Promise<PendingRetry[]> {
    // The statement names its rows: READ COMMITTED on PostgreSQL is enough.
    const rows = await this.#db.transaction(
      () => this.#db.all<PendingRow>(this.#takeDue, [now, limit]),
      READ_COMMITTED,
    );
    // RETURNING has no order of its own.
    return rows.map(toPending).sort((a, b) => (a.dueAt < b.dueAt ? -1 : a.dueAt > b.dueAt ? 1 : 0));
  }

  async pending(accountId: string, checkId: string): Promise<PendingRetry[]> {
    const rows = await this.#db.all<PendingRow>(
      'SELECT * FROM pending_retries WHERE check_id = ? AND account_id = ? ORDER BY due_at',
      [checkId, accountId],
    );
    return rows.map(toPending);
  }
}
