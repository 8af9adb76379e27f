/** Reader keys of private status pages: stored hashed and masked like API and location keys (keys.ts). */
import type { SqlDatabase } from '../sql/database.ts';
import type { StatusPageKeyRecord, StatusPageKeyRepo } from '../status-page-web-types.ts';
import { hashKey, newStatusPageKey } from './keys.ts';
import { type KeyTable, storeKey } from './stored-keys.ts';

const KEYS: KeyTable = { table: 'status_page_keys', owner: 'status_page_id' };

interface KeyRow {
  id: string;
  status_page_id: string;
  masked_key: string;
  created_at: string;
  updated_at: string | null;
}

const toRecord = (row: KeyRow): StatusPageKeyRecord => ({
  id: row.id,
  statusPageId: row.status_page_id,
  maskedKey: row.masked_key,
  createdAt: row.created_at,
  updatedAt: row.updated_at,
});

export class SqlStatusPageKeyRepo implements StatusPageKeyRepo {
  readonly #db: SqlDatabase;
  constructor(db: SqlDatabase) {
    this.#db = db;
  }

  async #owned(accountId: string, statusPageId: string): Promise<boolean> {
    return (
      (await this.#db.get('SELECT 1 AS found FROM status_pages WHERE id = ? AND account_id = ?', [
        statusPageId,
        accountId,
      ])) !== undefined
    );
  }

  async create(
    accountId: string,
    statusPageId: string,
  ): Promise<{ record: StatusPageKeyRecord; key: string } | undefined> {
    if (!(await this.#owned(accountId, statusPageId))) return undefined;
    const key = newStatusPageKey();
    const { id, maskedKey, createdAt } = await storeKey(this.#db, KEYS, statusPageId, key);
    const record: StatusPageKeyRecord = { id, statusPageId, maskedKey, createdAt, updatedAt: null };
    return { record, key };
  }

  async list(accountId: string, statusPageId: string): Promise<StatusPageKeyRecord[] | undefined> {
    if (!(await this.#owned(accountId, statusPageId))) return undefined;
    const rows = await this.#db.all<KeyRow>(
      'SELECT id, status_page_id, masked_key, created_at, updated_at FROM status_page_keys WHERE status_page_id = ? ORDER BY created_at, id',
      [statusPageId],
    );
    return rows.map(toRecord);
  }

  async revoke(accountId: string, statusPageId: string, keyId: string): Promise<boolean> {
    if (!(await this.#owned(accountId, statusPageId))) return false;
    return (
      (await this.#db.run('DELETE FROM status_page_keys WHERE id = ? AND status_page_id = ?', [keyId, statusPageId]))
        .changes > 0
    );
  }

  async opens(statusPageId: string, rawKey: string): Promise<boolean> {
    const row = await this.#db.get(
      'SELECT 1 AS found FROM status_page_keys WHERE key_hash = ? AND status_page_id = ?',
      [hashKey(rawKey), statusPageId],
    );
    return row !== undefined;
  }
}
