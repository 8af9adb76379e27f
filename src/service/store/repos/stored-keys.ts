/**
 * Keys that belong to one owner, stored hashed and masked (./keys.ts): an account's API keys
 * (api_keys), a private location's (location_keys), a private status page's reader keys
 * (status_page_keys) and a private dashboard's viewer keys (dashboard_keys).
 */
import { randomUUID } from 'node:crypto';
import { nowIso, type SqlDatabase } from '../sql/database.ts';
import { hashKey, maskKey } from './keys.ts';

export type KeyTable =
  | { table: 'api_keys'; owner: 'account_id' }
  | { table: 'location_keys'; owner: 'location_id' }
  | { table: 'status_page_keys'; owner: 'status_page_id' }
  | { table: 'dashboard_keys'; owner: 'dashboard_id' };

/** What is kept of a new key besides its hash; the raw key itself is shown once and never stored. */
export interface StoredKey {
  id: string;
  maskedKey: string;
  createdAt: string;
}

export async function storeKey(
  db: SqlDatabase,
  { table, owner }: KeyTable,
  ownerId: string | number,
  rawKey: string,
): Promise<StoredKey> {
  const key: StoredKey = { id: randomUUID(), maskedKey: maskKey(rawKey), createdAt: nowIso() };
  await db.run(`INSERT INTO ${table} (id, ${owner}, key_hash, masked_key, created_at) VALUES (?, ?, ?, ?, ?)`, [
    key.id,
    ownerId,
    hashKey(rawKey),
    key.maskedKey,
    key.createdAt,
  ]);
  return key;
}
