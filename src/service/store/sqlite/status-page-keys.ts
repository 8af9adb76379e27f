/** Reader keys of private status pages: stored hashed and masked like API and location keys (keys.ts). */
import { randomUUID } from 'node:crypto';
import type { DatabaseSync } from 'node:sqlite';
import type { StatusPageKeyRecord, StatusPageKeyRepo } from '../status-page-web-types.ts';
import { nowIso, statement } from './db.ts';
import { hashKey, maskKey, newStatusPageKey } from './keys.ts';

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

export class SqliteStatusPageKeyRepo implements StatusPageKeyRepo {
  readonly #db: DatabaseSync;
  constructor(db: DatabaseSync) {
    this.#db = db;
  }

  #owned(accountId: string, statusPageId: string): boolean {
    return statement(this.#db, 'SELECT 1 FROM status_pages WHERE id = ? AND account_id = ?').get(statusPageId, accountId) !== undefined;
  }

  async create(accountId: string, statusPageId: string): Promise<{ record: StatusPageKeyRecord; key: string } | undefined> {
    if (!this.#owned(accountId, statusPageId)) return undefined;
    const key = newStatusPageKey();
    const record: StatusPageKeyRecord = { id: randomUUID(), statusPageId, maskedKey: maskKey(key), createdAt: nowIso(), updatedAt: null };
    statement(this.#db, 'INSERT INTO status_page_keys (id, status_page_id, key_hash, masked_key, created_at) VALUES (?, ?, ?, ?, ?)').run(
      record.id,
      statusPageId,
      hashKey(key),
      record.maskedKey,
      record.createdAt,
    );
    return { record, key };
  }

  async list(accountId: string, statusPageId: string): Promise<StatusPageKeyRecord[] | undefined> {
    if (!this.#owned(accountId, statusPageId)) return undefined;
    const rows = statement(
      this.#db,
      'SELECT id, status_page_id, masked_key, created_at, updated_at FROM status_page_keys WHERE status_page_id = ? ORDER BY created_at, id',
    ).all(statusPageId) as unknown as KeyRow[];
    return rows.map(toRecord);
  }

  async revoke(accountId: string, statusPageId: string, keyId: string): Promise<boolean> {
    if (!this.#owned(accountId, statusPageId)) return false;
    return statement(this.#db, 'DELETE FROM status_page_keys WHERE id = ? AND status_page_id = ?').run(keyId, statusPageId).changes > 0;
  }

  async opens(statusPageId: string, rawKey: string): Promise<boolean> {
    return (
      statement(this.#db, 'SELECT 1 FROM status_page_keys WHERE key_hash = ? AND status_page_id = ?').get(hashKey(rawKey), statusPageId) !==
      undefined
    );
  }
}
