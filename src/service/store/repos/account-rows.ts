/**
 * The reads and deletes that repos of account-owned rows share: a page of the account's rows oldest
 * first, one row by id, and deleting one. The id alone is never enough: a row of another account
 * reads as missing.
 */
import type { SqlDatabase } from '../sql/database.ts';

/** The tables of rows with an integer `id` and an `account_id`, read through these helpers. */
export type AccountTable = 'maintenance_windows' | 'snippets';

/** Page `page` (from 1) of `limit` rows, in id order. */
export function accountRowsPage<Row>(
  db: SqlDatabase,
  table: AccountTable,
  accountId: string,
  opts: { limit: number; page: number },
): Promise<Row[]> {
  return db.all<Row>(`SELECT * FROM ${table} WHERE account_id = ? ORDER BY id LIMIT ? OFFSET ?`, [
    accountId,
    opts.limit,
    (opts.page - 1) * opts.limit,
  ]);
}

export function accountRow<Row>(
  db: SqlDatabase,
  table: AccountTable,
  accountId: string,
  id: number,
): Promise<Row | undefined> {
  return db.get<Row>(`SELECT * FROM ${table} WHERE id = ? AND account_id = ?`, [id, accountId]);
}

/** Whether the account had such a row (now deleted). */
export async function deleteAccountRow(
  db: SqlDatabase,
  table: AccountTable,
  accountId: string,
  id: number,
): Promise<boolean> {
  return (await db.run(`DELETE FROM ${table} WHERE id = ? AND account_id = ?`, [id, accountId])).changes > 0;
}
