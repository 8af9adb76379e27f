import { randomUUID } from 'node:crypto';
import type { SqlDatabase } from '../sql/database.ts';
import { nowIso } from '../sql/database.ts';
import type { Account, AccountRepo, ApiKeyRecord } from '../store.ts';
import { hashKey, newApiKey } from './keys.ts';
import { type KeyTable, storeKey } from './stored-keys.ts';

const API_KEYS: KeyTable = { table: 'api_keys', owner: 'account_id' };

interface AccountRow {
  id: string;
  name: string;
  created_at: string;
}

interface ApiKeyRow {
  id: string;
  account_id: string;
  masked_key: string;
  created_at: string;
}

const toAccount = (row: AccountRow): Account => ({ id: row.id, name: row.name, createdAt: row.created_at });
const toKeyRecord = (row: ApiKeyRow): ApiKeyRecord => ({
  id: row.id,
  accountId: row.account_id,
  maskedKey: row.masked_key,
  createdAt: row.created_at,
});

export class SqlAccountRepo implements AccountRepo {
  readonly #db: SqlDatabase;
  constructor(db: SqlDatabase) {
    this.#db = db;
  }

  async create(name: string): Promise<{ account: Account; apiKey: string }> {
    const account: Account = { id: randomUUID(), name, createdAt: nowIso() };
    // One transaction: an account without its first key could never be used.
    const apiKey = await this.#db.transaction(async () => {
      await this.#db.run('INSERT INTO accounts (id, name, created_at) VALUES (?, ?, ?)', [
        account.id,
        name,
        account.createdAt,
      ]);
      return (await this.#insertKey(account.id)).apiKey;
    });
    return { account, apiKey };
  }

  async get(accountId: string): Promise<Account | undefined> {
    const row = (await this.#db.get('SELECT id, name, created_at FROM accounts WHERE id = ?', [accountId])) as
      | AccountRow
      | undefined;
    return row && toAccount(row);
  }

  async findAccountByApiKey(rawKey: string): Promise<Account | undefined> {
    const row = (await this.#db.get(
      `SELECT a.id, a.name, a.created_at FROM api_keys k JOIN accounts a ON a.id = k.account_id
         WHERE k.key_hash = ? AND k.revoked_at IS NULL`,
      [hashKey(rawKey)],
    )) as AccountRow | undefined;
    return row && toAccount(row);
  }

  async createApiKey(accountId: string): Promise<{ record: ApiKeyRecord; apiKey: string }> {
    return this.#insertKey(accountId);
  }

  async listApiKeys(accountId: string): Promise<ApiKeyRecord[]> {
    const rows = (await this.#db.all(
      `SELECT id, account_id, masked_key, created_at FROM api_keys
         WHERE account_id = ? AND revoked_at IS NULL ORDER BY created_at, id`,
      [accountId],
    )) as unknown as ApiKeyRow[];
    return rows.map(toKeyRecord);
  }

  async revokeApiKey(accountId: string, keyId: string): Promise<boolean> {
    const result = await this.#db.run(
      'UPDATE api_keys SET revoked_at = ? WHERE id = ? AND account_id = ? AND revoked_at IS NULL',
      [nowIso(), keyId, accountId],
    );
    return result.changes > 0;
  }

  async #insertKey(accountId: string): Promise<{ record: ApiKeyRecord; apiKey: string }> {
    const apiKey = newApiKey();
    const { id, maskedKey, createdAt } = await storeKey(this.#db, API_KEYS, accountId, apiKey);
    return { record: { id, accountId, maskedKey, createdAt }, apiKey };
  }
}
