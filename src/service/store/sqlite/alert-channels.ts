/**
 * Alert channels on SQLite (migration 010): the config as JSON with its secret fields sealed, the
 * subscriptions in their own table.
 */
import type { DatabaseSync } from 'node:sqlite';
import type { AlertChannelDefinition } from '../../alert-channels/channel-config.ts';
import { openChannelSecrets, sealChannelSecrets } from '../../alert-channels/channel-secrets.ts';
import type { SecretBox } from '../../secrets/box.ts';
import type {
  AlertChannelInput,
  AlertChannelRepo,
  AlertChannelSubscription,
  AlertChannelSubscriptionInput,
  AlertChannelTarget,
  ChannelRef,
  StoredAlertChannel,
  Subscriber,
} from '../alert-channel-types.ts';
import { inTransaction, nowIso } from './db.ts';

interface ChannelRow {
  id: number;
  account_id: string;
  type: string;
  sealed_config: string;
  send_recovery: number;
  send_failure: number;
  send_degraded: number;
  ssl_expiry: number;
  ssl_expiry_threshold: number;
  auto_subscribe: number;
  created_at: string;
  updated_at: string | null;
}

interface SubscriptionRow {
  id: number;
  check_id: string | null;
  group_id: number | null;
  activated: number;
}

const toSubscription = (r: SubscriptionRow): AlertChannelSubscription => ({
  id: r.id,
  checkId: r.check_id,
  groupId: r.group_id,
  activated: r.activated === 1,
});

/** The column naming a subscriber, and its id. */
const subscriberColumn = (s: Subscriber): ['check_id' | 'group_id', string | number] =>
  'checkId' in s ? ['check_id', s.checkId] : ['group_id', s.groupId];

export class SqliteAlertChannelRepo implements AlertChannelRepo {
  readonly #db: DatabaseSync;
  readonly #box: SecretBox;
  constructor(db: DatabaseSync, box: SecretBox) {
    this.#db = db;
    this.#box = box;
  }

  #subscriptions(channelId: number): AlertChannelSubscription[] {
    const rows = this.#db.prepare('SELECT * FROM alert_channel_subscriptions WHERE channel_id = ? ORDER BY id').all(channelId);
    return (rows as unknown as SubscriptionRow[]).map(toSubscription);
  }

  /** A channel without its subscriptions: what sending needs (a channel may have thousands of those). */
  #toTarget(row: ChannelRow): AlertChannelTarget {
    const sealed = { type: row.type, config: JSON.parse(row.sealed_config) } as AlertChannelDefinition;
    return {
      id: row.id,
      accountId: row.account_id,
      definition: openChannelSecrets(this.#box, sealed),
      sendRecovery: row.send_recovery === 1,
      sendFailure: row.send_failure === 1,
      sendDegraded: row.send_degraded === 1,
      sslExpiry: row.ssl_expiry === 1,
      sslExpiryThreshold: row.ssl_expiry_threshold,
      autoSubscribe: row.auto_subscribe === 1,
      createdAt: row.created_at,
      updatedAt: row.updated_at,
    };
  }

  #toChannel(row: ChannelRow): StoredAlertChannel {
    return { ...this.#toTarget(row), subscriptions: this.#subscriptions(row.id) };
  }

  /** The column values of an input, in the order of COLUMNS. */
  #values(input: AlertChannelInput): Array<string | number> {
    const sealed = sealChannelSecrets(this.#box, input.definition);
    const flag = (b: boolean) => (b ? 1 : 0);
    return [
      input.definition.type,
      JSON.stringify(sealed.config),
      flag(input.sendRecovery),
      flag(input.sendFailure),
      flag(input.sendDegraded),
      flag(input.sslExpiry),
      input.sslExpiryThreshold,
      flag(input.autoSubscribe),
    ];
  }

  #replaceSubscriptions(channelId: number, subs: AlertChannelSubscriptionInput[] | undefined): void {
    if (!subs) return;
    this.#db.prepare('DELETE FROM alert_channel_subscriptions WHERE channel_id = ?').run(channelId);
    for (const sub of subs) this.#upsertSubscription(channelId, sub);
  }

  #upsertSubscription(channelId: number, sub: AlertChannelSubscriptionInput): AlertChannelSubscription {
    const target = sub.checkId !== null ? 'check_id' : 'group_id';
    const row = this.#db
      .prepare(
        `INSERT INTO alert_channel_subscriptions (channel_id, check_id, group_id, activated) VALUES (?, ?, ?, ?)
         ON CONFLICT (channel_id, ${target}) DO UPDATE SET activated = excluded.activated RETURNING *`,
      )
      .get(channelId, sub.checkId, sub.groupId, sub.activated ? 1 : 0) as unknown as SubscriptionRow;
    return toSubscription(row);
  }

  async list(accountId: string, opts: { limit: number; page: number }): Promise<StoredAlertChannel[]> {
    const rows = this.#db
      .prepare('SELECT * FROM alert_channels WHERE account_id = ? ORDER BY id LIMIT ? OFFSET ?')
      .all(accountId, opts.limit, (opts.page - 1) * opts.limit);
    return (rows as unknown as ChannelRow[]).map((r) => this.#toChannel(r));
  }

  async get(accountId: string, id: number): Promise<StoredAlertChannel | undefined> {
    const row = this.#row(accountId, id);
    return row && this.#toChannel(row);
  }

  #row(accountId: string, id: number): ChannelRow | undefined {
    return this.#db.prepare('SELECT * FROM alert_channels WHERE id = ? AND account_id = ?').get(id, accountId) as ChannelRow | undefined;
  }

  async create(accountId: string, input: AlertChannelInput): Promise<StoredAlertChannel> {
    return inTransaction(this.#db, () => {
      const row = this.#db
        .prepare(
          `INSERT INTO alert_channels (type, sealed_config, send_recovery, send_failure, send_degraded, ssl_expiry,
             ssl_expiry_threshold, auto_subscribe, account_id, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING id`,
        )
        .get(...this.#values(input), accountId, nowIso()) as { id: number };
      this.#replaceSubscriptions(row.id, input.subscriptions);
      return this.#toChannel(this.#db.prepare('SELECT * FROM alert_channels WHERE id = ?').get(row.id) as unknown as ChannelRow);
    });
  }

  async update(accountId: string, id: number, input: AlertChannelInput): Promise<StoredAlertChannel | undefined> {
    return inTransaction(this.#db, () => {
      const row = this.#db
        .prepare(
          `UPDATE alert_channels SET type = ?, sealed_config = ?, send_recovery = ?, send_failure = ?, send_degraded = ?,
             ssl_expiry = ?, ssl_expiry_threshold = ?, auto_subscribe = ?, updated_at = ?
           WHERE id = ? AND account_id = ? RETURNING *`,
        )
        .get(...this.#values(input), nowIso(), id, accountId) as ChannelRow | undefined;
      if (!row) return undefined;
      this.#replaceSubscriptions(id, input.subscriptions);
      return this.#toChannel(row);
    });
  }

  async delete(accountId: string, id: number): Promise<boolean> {
    return this.#db.prepare('DELETE FROM alert_channels WHERE id = ? AND account_id = ?').run(id, accountId).changes > 0;
  }

  async putSubscription(
    accountId: string,
    channelId: number,
    input: AlertChannelSubscriptionInput,
  ): Promise<AlertChannelSubscription | undefined> {
    return inTransaction(this.#db, () => {
      const owned = this.#db.prepare('SELECT 1 FROM alert_channels WHERE id = ? AND account_id = ?').get(channelId, accountId);
      return owned ? this.#upsertSubscription(channelId, input) : undefined;
    });
  }

  async listSubscribedTo(accountId: string, checkId: string, groupId: number | null): Promise<AlertChannelTarget[]> {
    const rows = this.#db
      .prepare(
        `SELECT * FROM alert_channels WHERE account_id = ? AND id IN (
           SELECT channel_id FROM alert_channel_subscriptions WHERE activated = 1 AND (check_id = ? OR group_id = ?))
         ORDER BY id`,
      )
      .all(accountId, checkId, groupId);
    return (rows as unknown as ChannelRow[]).map((r) => this.#toTarget(r));
  }
  async getTarget(accountId: string, id: number): Promise<AlertChannelTarget | undefined> {
    const row = this.#row(accountId, id);
    return row && this.#toTarget(row);
  }


  async subscribeNew(accountId: string, subscriber: Subscriber, given: ChannelRef[], autoAssign: boolean): Promise<void> {
    const [column, id] = subscriberColumn(subscriber);
    inTransaction(this.#db, () => {
      this.#insertRefs(accountId, column, id, given);
      if (!autoAssign) return;
      // The given list was inserted first, so its activated flag wins for a channel it names.
      this.#db
        .prepare(
          `INSERT INTO alert_channel_subscriptions (channel_id, ${column}, activated)
           SELECT id, ?, 1 FROM alert_channels WHERE account_id = ? AND auto_subscribe = 1
           ON CONFLICT DO NOTHING`,
        )
        .run(id, accountId);
    });
  }

  async replaceSubscriptionsOf(accountId: string, subscriber: Subscriber, refs: ChannelRef[]): Promise<void> {
    const [column, id] = subscriberColumn(subscriber);
    inTransaction(this.#db, () => {
      this.#db
        .prepare(
          `DELETE FROM alert_channel_subscriptions WHERE ${column} = ?
             AND channel_id IN (SELECT id FROM alert_channels WHERE account_id = ?)`,
        )
        .run(id, accountId);
      this.#insertRefs(accountId, column, id, refs);
    });
  }

  /** Inserts the subscriptions of channels of the account; others (deleted meanwhile) are skipped. */
  #insertRefs(accountId: string, column: 'check_id' | 'group_id', id: string | number, refs: ChannelRef[]): void {
    const insert = this.#db.prepare(
      `INSERT INTO alert_channel_subscriptions (channel_id, ${column}, activated)
       SELECT id, ?, ? FROM alert_channels WHERE id = ? AND account_id = ?
       ON CONFLICT DO UPDATE SET activated = excluded.activated`,
    );
    for (const ref of refs) insert.run(id, ref.activated ? 1 : 0, ref.alertChannelId, accountId);
  }

  async checkSubscriptions(accountId: string, checkIds: string[]): Promise<Map<string, ChannelRef[]>> {
    return this.#refsOf(accountId, 'check_id', checkIds);
  }

  async groupSubscriptions(accountId: string, groupIds: number[]): Promise<Map<number, ChannelRef[]>> {
    return this.#refsOf(accountId, 'group_id', groupIds);
  }

  #refsOf<K extends string | number>(accountId: string, column: 'check_id' | 'group_id', ids: K[]): Map<K, ChannelRef[]> {
    const byId = new Map<K, ChannelRef[]>(ids.map((id) => [id, []]));
    const rows = this.#db
      .prepare(
        `SELECT s.${column} AS owner, s.channel_id, s.activated FROM alert_channel_subscriptions s
         JOIN alert_channels c ON c.id = s.channel_id AND c.account_id = ?
         WHERE s.${column} IN (SELECT value FROM json_each(?)) ORDER BY s.channel_id`,
      )
      .all(accountId, JSON.stringify(ids)) as Array<{ owner: K; channel_id: number; activated: number }>;
    for (const r of rows) byId.get(r.owner)?.push({ alertChannelId: r.channel_id, activated: r.activated === 1 });
    return byId;
  }

  async ownedIds(accountId: string, ids: number[]): Promise<Set<number>> {
    const rows = this.#db
      .prepare('SELECT id FROM alert_channels WHERE account_id = ? AND id IN (SELECT value FROM json_each(?))')
      .all(accountId, JSON.stringify(ids)) as Array<{ id: number }>;
    return new Set(rows.map((r) => r.id));
  }
}
