/**
 * Subscriptions of a status page: email addresses and (our addition) webhook URLs. Addresses are
 * compared case-insensitively (address_key), so one address subscribes a page once. A webhook's
 * signing secret is stored sealed (migration 009); nothing here reads it back: the outbox copies
 * the sealed value into each delivery (./outbox.ts).
 */
import { randomUUID } from 'node:crypto';
import type { DatabaseSync } from 'node:sqlite';
import type { SecretBox } from '../../secrets/box.ts';
import type {
  SubscriptionInput,
  SubscriptionRecord,
  SubscriptionRepo,
  SubscriptionStatus,
  SubscriptionType,
} from '../status-pages-types.ts';
import { inTransaction, nowIso } from './db.ts';

interface SubscriptionRow {
  id: string;
  status_page_id: string;
  type: string;
  address: string;
  status: string;
  created_at: string;
  updated_at: string;
}

const toSubscription = (row: SubscriptionRow): SubscriptionRecord => ({
  id: row.id,
  statusPageId: row.status_page_id,
  type: row.type as SubscriptionType,
  address: row.address,
  status: row.status as SubscriptionStatus,
  createdAt: row.created_at,
  updatedAt: row.updated_at,
});

export class SqliteSubscriptionRepo implements SubscriptionRepo {
  readonly #db: DatabaseSync;
  readonly #box: SecretBox;
  constructor(db: DatabaseSync, box: SecretBox) {
    this.#db = db;
    this.#box = box;
  }

  #pageOwned(accountId: string, statusPageId: string): boolean {
    return (
      this.#db.prepare('SELECT 1 FROM status_pages WHERE id = ? AND account_id = ?').get(statusPageId, accountId) !== undefined
    );
  }

  async list(accountId: string, statusPageId: string): Promise<SubscriptionRecord[] | undefined> {
    if (!this.#pageOwned(accountId, statusPageId)) return undefined;
    const rows = this.#db
      .prepare(
        `SELECT id, status_page_id, type, address, status, created_at, updated_at FROM sp_subscriptions
         WHERE status_page_id = ? ORDER BY rowid`,
      )
      .all(statusPageId) as unknown as SubscriptionRow[];
    return rows.map(toSubscription);
  }

  async bulkCreate(
    accountId: string,
    statusPageId: string,
    items: SubscriptionInput[],
    status: SubscriptionStatus,
  ): Promise<{ created: number; skipped: number } | undefined> {
    return inTransaction(this.#db, () => {
      if (!this.#pageOwned(accountId, statusPageId)) return undefined;
      const insert = this.#db.prepare(
        `INSERT INTO sp_subscriptions (id, status_page_id, type, address, address_key, sealed_secret, status, created_at, updated_at)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (status_page_id, type, address_key) DO NOTHING`,
      );
      const now = nowIso();
      let created = 0;
      for (const item of items) {
        const sealed = item.secret === null ? null : this.#box.seal(item.secret);
        created += Number(
          insert.run(randomUUID(), statusPageId, item.type, item.address, item.address.toLowerCase(), sealed, status, now, now).changes,
        );
      }
      return { created, skipped: items.length - created };
    });
  }

  async delete(accountId: string, statusPageId: string, subscriptionId: string): Promise<boolean> {
    const result = this.#db
      .prepare(
        `DELETE FROM sp_subscriptions WHERE id = ? AND status_page_id = ?
         AND status_page_id IN (SELECT id FROM status_pages WHERE account_id = ?)`,
      )
      .run(subscriptionId, statusPageId, accountId);
    return result.changes > 0;
  }
}
