import type { DatabaseSync } from 'node:sqlite';
import type { PendingRetry, RunRetryLink, RunRetryRepo } from '../check-group-types.ts';
import { inTransaction, nowIso } from './db.ts';

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

/** Retry columns of runs (added by migration 005) and the pending_retries table. */
export class SqliteRunRetryRepo implements RunRetryRepo {
  readonly #db: DatabaseSync;
  constructor(db: DatabaseSync) {
    this.#db = db;
  }

  async linkOf(runId: string): Promise<RunRetryLink> {
    const row = this.#db.prepare('SELECT retry_of, attempt, chain_started_at FROM runs WHERE run_id = ?').get(runId) as
      | { retry_of: string | null; attempt: number; chain_started_at: string | null }
      | undefined;
    return { retryOf: row?.retry_of ?? null, attempt: row?.attempt ?? 1, chainStartedAt: row?.chain_started_at ?? null };
  }

  async setLink(runId: string, link: RunRetryLink): Promise<void> {
    this.#db
      .prepare('UPDATE runs SET retry_of = ?, attempt = ?, chain_started_at = ? WHERE run_id = ?')
      .run(link.retryOf, link.attempt, link.chainStartedAt, runId);
  }

  async plan(retry: PendingRetry): Promise<boolean> {
    const result = this.#db
      .prepare(
        `INSERT INTO pending_retries (retry_of, account_id, check_id, location_id, attempt, chain_started_at, due_at, created_at)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (retry_of) DO NOTHING`,
      )
      .run(retry.retryOf, retry.accountId, retry.checkId, retry.locationId, retry.attempt, retry.chainStartedAt, retry.dueAt, nowIso());
    return result.changes > 0;
  }

  async takeDue(now: string, limit: number): Promise<PendingRetry[]> {
    return inTransaction(this.#db, () => {
      const rows = this.#db
        .prepare('SELECT * FROM pending_retries WHERE due_at <= ? ORDER BY due_at LIMIT ?')
        .all(now, limit) as unknown as PendingRow[];
      const remove = this.#db.prepare('DELETE FROM pending_retries WHERE retry_of = ?');
      for (const row of rows) remove.run(row.retry_of);
      return rows.map(toPending);
    });
  }

  async pending(accountId: string, checkId: string): Promise<PendingRetry[]> {
    const rows = this.#db
      .prepare('SELECT * FROM pending_retries WHERE check_id = ? AND account_id = ? ORDER BY due_at')
      .all(checkId, accountId) as unknown as PendingRow[];
    return rows.map(toPending);
  }
}
