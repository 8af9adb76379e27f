/**
 * Subscriptions of a status page: email addresses and (our addition) webhook URLs. Addresses are
 * compared case-insensitively (address_key), so one address subscribes a page once. A webhook's
 * signing secret and each subscription's unsubscribe token are stored sealed (migrations 009, 017);
 * nothing here reads them back: the outbox copies the sealed values into each delivery (./outbox.ts).
 *
 * Double opt-in: a PENDING subscription gets a confirmation queued in the outbox in the same
 * transaction that makes it (or re-sends it), and is removed when expires_at passes unconfirmed.
 * Link tokens are found by their SHA-256 (sp_subscription_tokens).
 */
import { randomUUID } from 'node:crypto';
import type { SecretBox } from '../../secrets/box.ts';
import { hashLinkToken, newLinkToken } from '../../subscriptions/tokens.ts';
import type { SqlDatabase } from '../sql/database.ts';
import { dialectSql } from '../sql/dialect-sql.ts';
import type {
  ConfirmationPolicy,
  LinkTokenPurpose,
  SubscribedPage,
  SubscribeOutcome,
  SubscriptionByToken,
  SubscriptionInput,
  SubscriptionRecord,
  SubscriptionRepo,
  SubscriptionStatus,
  SubscriptionType,
} from '../status-pages-types.ts';
import { enqueueConfirmation } from './outbox.ts';

interface SubscriptionRow {
  id: string;
  status_page_id: string;
  type: string;
  address: string;
  status: string;
  created_at: string;
  updated_at: string;
}

interface ExistingRow {
  id: string;
  status: string;
  expires_at: string | null;
  confirmation_sent_at: string | null;
}

const COLUMNS = 's.id, s.status_page_id, s.type, s.address, s.status, s.created_at, s.updated_at';
const PAGE_COLUMNS = 'p.id AS page_id, p.account_id AS page_account_id, p.name AS page_name, p.url AS page_url';

type RowWithPage = SubscriptionRow & { page_id: string; page_account_id: string; page_name: string; page_url: string };

const toSubscription = (row: SubscriptionRow): SubscriptionRecord => ({
  id: row.id,
  statusPageId: row.status_page_id,
  type: row.type as SubscriptionType,
  address: row.address,
  status: row.status as SubscriptionStatus,
  createdAt: row.created_at,
  updatedAt: row.updated_at,
});

const toByToken = (row: RowWithPage): SubscriptionByToken => ({
  subscription: toSubscription(row),
  page: { id: row.page_id, accountId: row.page_account_id, name: row.page_name, url: row.page_url },
});

export class SqlSubscriptionRepo implements SubscriptionRepo {
  readonly #db: SqlDatabase;
  readonly #box: SecretBox;
  constructor(db: SqlDatabase, box: SecretBox) {
    this.#db = db;
    this.#box = box;
  }

  async #ownedPage(accountId: string, statusPageId: string): Promise<SubscribedPage | undefined> {
    const row = await this.#db.get<SubscribedPage>(
      'SELECT id, account_id AS "accountId", name, url FROM status_pages WHERE id = ? AND account_id = ?',
      [statusPageId, accountId],
    );
    return row && { ...row };
  }

  async list(accountId: string, statusPageId: string): Promise<SubscriptionRecord[] | undefined> {
    if (!(await this.#ownedPage(accountId, statusPageId))) return undefined;
    const rows = await this.#db.all<SubscriptionRow>(
      `SELECT ${COLUMNS} FROM sp_subscriptions s WHERE s.status_page_id = ? ORDER BY ${dialectSql(this.#db.dialect).insertionOrder('s')}`,
      [statusPageId],
    );
    return rows.map(toSubscription);
  }

  async bulkCreate(
    accountId: string,
    statusPageId: string,
    items: SubscriptionInput[],
    status: SubscriptionStatus,
    policy: ConfirmationPolicy,
  ) {
    return this.#db.transaction(async () => {
      const page = await this.#ownedPage(accountId, statusPageId);
      if (!page) return undefined;
      const outcomes: SubscribeOutcome[] = [];
      for (const item of items) outcomes.push(await this.#subscribeOne(page, item, status, policy));
      const created = outcomes.filter((o) => o === 'created').length;
      const confirmationsQueued =
        status === 'PENDING' ? outcomes.filter((o) => o === 'created' || o === 'resent').length : 0;
      return { created, skipped: items.length - created, confirmationsQueued };
    });
  }

  async subscribe(
    page: SubscribedPage,
    item: SubscriptionInput,
    policy: ConfirmationPolicy,
  ): Promise<SubscribeOutcome> {
    return this.#db.transaction(() => this.#subscribeOne(page, item, 'PENDING', policy));
  }

  /** Must run inside a transaction. */
  async #subscribeOne(
    page: SubscribedPage,
    item: SubscriptionInput,
    status: SubscriptionStatus,
    policy: ConfirmationPolicy,
  ): Promise<SubscribeOutcome> {
    const now = policy.now.toISOString();
    const key = item.address.toLowerCase();
    let existing = await this.#db.get<ExistingRow>(
      'SELECT id, status, expires_at, confirmation_sent_at FROM sp_subscriptions WHERE status_page_id = ? AND type = ? AND address_key = ?',
      [page.id, item.type, key],
    );
    // Expired but not swept yet: it is gone as far as anyone can tell, so this is a new subscription.
    if (existing?.expires_at && existing.expires_at <= now) {
      await this.#db.run('DELETE FROM sp_subscriptions WHERE id = ?', [existing.id]);
      existing = undefined;
    }
    if (!existing) {
      const id = await this.#insert(page.id, item, key, status, policy);
      if (status === 'PENDING') await this.#sendConfirmation(page, id, policy);
      return 'created';
    }
    if (existing.status !== 'PENDING' || status !== 'PENDING') return 'exists';
    if (existing.confirmation_sent_at && existing.confirmation_sent_at > policy.resendAfter.toISOString())
      return 'throttled';
    await this.#sendConfirmation(page, existing.id, policy);
    return 'resent';
  }

  async #insert(
    pageId: string,
    item: SubscriptionInput,
    key: string,
    status: SubscriptionStatus,
    policy: ConfirmationPolicy,
  ): Promise<string> {
    const id = randomUUID();
    const now = policy.now.toISOString();
    const unsubscribe = newLinkToken();
    await this.#db.run(
      `INSERT INTO sp_subscriptions (id, status_page_id, type, address, address_key, sealed_secret, sealed_unsubscribe_token,
         status, expires_at, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
      [
        id,
        pageId,
        item.type,
        item.address,
        key,
        item.secret === null ? null : this.#box.seal(item.secret),
        this.#box.seal(unsubscribe),
        status,
        status === 'PENDING' ? policy.expiresAt.toISOString() : null,
        now,
        now,
      ],
    );
    await this.#addToken(id, 'unsubscribe', unsubscribe, now);
    return id;
  }

  async #addToken(subscriptionId: string, purpose: LinkTokenPurpose, token: string, now: string): Promise<void> {
    await this.#db.run(
      'INSERT INTO sp_subscription_tokens (token_hash, subscription_id, purpose, created_at) VALUES (?, ?, ?, ?)',
      [hashLinkToken(token), subscriptionId, purpose, now],
    );
  }

  /** A fresh confirm token, queued in a confirmation; the expiry starts again from now. */
  async #sendConfirmation(page: SubscribedPage, subscriptionId: string, policy: ConfirmationPolicy): Promise<void> {
    const now = policy.now.toISOString();
    const token = newLinkToken();
    await this.#addToken(subscriptionId, 'confirm', token, now);
    await this.#db.run(
      'UPDATE sp_subscriptions SET confirmation_sent_at = ?, expires_at = ?, updated_at = ? WHERE id = ?',
      [now, policy.expiresAt.toISOString(), now, subscriptionId],
    );
    await enqueueConfirmation(this.#db, {
      page,
      subscriptionId,
      sealedConfirmToken: this.#box.seal(token),
      expiresAt: policy.expiresAt.toISOString(),
      now,
    });
  }

  #byToken(token: string, purpose: LinkTokenPurpose, now: Date): Promise<RowWithPage | undefined> {
    return this.#db.get<RowWithPage>(
      `SELECT ${COLUMNS}, ${PAGE_COLUMNS} FROM sp_subscription_tokens t
       JOIN sp_subscriptions s ON s.id = t.subscription_id JOIN status_pages p ON p.id = s.status_page_id
       WHERE t.token_hash = ? AND t.purpose = ? AND (s.expires_at IS NULL OR s.expires_at > ?)
         AND (t.purpose = 'unsubscribe' OR s.status = 'PENDING')`,
      [hashLinkToken(token), purpose, now.toISOString()],
    );
  }

  async findByToken(token: string, purpose: LinkTokenPurpose, now: Date): Promise<SubscriptionByToken | undefined> {
    const row = await this.#byToken(token, purpose, now);
    return row && toByToken(row);
  }

  async confirm(token: string, now: Date): Promise<SubscriptionByToken | undefined> {
    return this.#db.transaction(async () => {
      const row = await this.#byToken(token, 'confirm', now);
      if (!row) return undefined;
      const at = now.toISOString();
      await this.#db.run(
        `UPDATE sp_subscriptions SET status = 'VERIFIED', expires_at = NULL, updated_at = ? WHERE id = ?`,
        [at, row.id],
      );
      await this.#db.run(`DELETE FROM sp_subscription_tokens WHERE subscription_id = ? AND purpose = 'confirm'`, [
        row.id,
      ]);
      return toByToken({ ...row, status: 'VERIFIED', updated_at: at });
    });
  }

  async unsubscribe(token: string): Promise<SubscriptionByToken | undefined> {
    return this.#db.transaction(async () => {
      // An unsubscribe link works whatever the expiry ("this was not me" from a confirmation email).
      const row = await this.#byToken(token, 'unsubscribe', new Date(0));
      if (!row) return undefined;
      await this.#db.run('DELETE FROM sp_subscriptions WHERE id = ?', [row.id]);
      return toByToken(row);
    });
  }

  async deleteExpired(now: Date): Promise<number> {
    const result = await this.#db.run(
      `DELETE FROM sp_subscriptions WHERE expires_at IS NOT NULL AND expires_at <= ? AND status = 'PENDING'`,
      [now.toISOString()],
    );
    return result.changes;
  }

  async delete(accountId: string, statusPageId: string, subscriptionId: string): Promise<boolean> {
    const result = await this.#db.run(
      `DELETE FROM sp_subscriptions WHERE id = ? AND status_page_id = ?
       AND status_page_id IN (SELECT id FROM status_pages WHERE account_id = ?)`,
      [subscriptionId, statusPageId, accountId],
    );
    return result.changes > 0;
  }
}
