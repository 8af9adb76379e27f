/**
 * Alert channels (migration 010): the config as JSON with its secret fields sealed, the
 * subscriptions in their own table.
 */
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
import { type Dialect, nowIso, type SqlDatabase } from '../sql/database.ts';
import { dialectSql } from '../sql/dialect-sql.ts';

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

type SubscriberColumn = 'check_id' | 'group_id';

/** The column naming a subscriber, and its id. */
const subscriberColumn = (s: Subscriber): [SubscriberColumn, string | number] =>
  'checkId' in s ? ['check_id', s.checkId] : ['group_id', s.groupId];

/** A subscriber id as a typed value in a SELECT list (PostgreSQL cannot tell the type of a bare parameter there). */
const typedSubscriber = (column: SubscriberColumn) => (column === 'check_id' ? 'CAST(? AS TEXT)' : 'CAST(? AS BIGINT)');

/** Ids passed as one JSON array parameter, as values of the subscriber column's type. */
const idsIn = (dialect: Dialect, column: SubscriberColumn | 'id') =>
  `(SELECT ${column === 'check_id' ? 'v.value' : 'CAST(v.value AS BIGINT)'} FROM ${dialectSql(dialect).jsonArrayTable('?', 'v')})`;

export class SqlAlertChannelRepo implements AlertChannelRepo {
  readonly #db: SqlDatabase;
  readonly #box: SecretBox;
  constructor(db: SqlDatabase, box: SecretBox) {
    this.#db = db;
    this.#box = box;
  }

  async #subscriptions(channelId: number): Promise<AlertChannelSubscription[]> {
    const rows = await this.#db.all<SubscriptionRow>(
      'SELECT * FROM alert_channel_subscriptions WHERE channel_id = ? ORDER BY id',
      [channelId],
    );
    return rows.map(toSubscription);
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

  async #toChannel(row: ChannelRow): Promise<StoredAlertChannel> {
    return { ...this.#toTarget(row), subscriptions: await this.#subscriptions(row.id) };
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

  async #replaceSubscriptions(channelId: number, subs: AlertChannelSubscriptionInput[] | undefined): Promise<void> {
    if (!subs) return;
    await this.#db.run('DELETE FROM alert_channel_subscriptions WHERE channel_id = ?', [channelId]);
    for (const sub of subs) await this.#upsertSubscription(channelId, sub);
  }

  async #upsertSubscription(channelId: number, sub: AlertChannelSubscriptionInput): Promise<AlertChannelSubscription> {
    const target = sub.checkId !== null ? 'check_id' : 'group_id';
    const row = await this.#db.get<SubscriptionRow>(
      `INSERT INTO alert_channel_subscriptions (channel_id, check_id, group_id, activated) VALUES (?, ?, ?, ?)
       ON CONFLICT (channel_id, ${target}) DO UPDATE SET activated = excluded.activated RETURNING *`,
      [channelId, sub.checkId, sub.groupId, sub.activated ? 1 : 0],
    );
    if (!row) throw new Error(`the subscription of alert channel ${channelId} was not written`);
    return toSubscription(row);
  }

  async list(accountId: string, opts: { limit: number; page: number }): Promise<StoredAlertChannel[]> {
    const rows = await this.#db.all<ChannelRow>(
      'SELECT * FROM alert_channels WHERE account_id = ? ORDER BY id LIMIT ? OFFSET ?',
      [accountId, opts.limit, (opts.page - 1) * opts.limit],
    );
    return Promise.all(rows.map((r) => this.#toChannel(r)));
  }

  async get(accountId: string, id: number): Promise<StoredAlertChannel | undefined> {
    const row = await this.#row(accountId, id);
    return row && this.#toChannel(row);
  }

  #row(accountId: string, id: number): Promise<ChannelRow | undefined> {
    return this.#db.get<ChannelRow>('SELECT * FROM alert_channels WHERE id = ? AND account_id = ?', [id, accountId]);
  }

  async create(accountId: string, input: AlertChannelInput): Promise<StoredAlertChannel> {
    return this.#db.transaction(async () => {
      const row = await this.#db.get<ChannelRow>(
        `INSERT INTO alert_channels (type, sealed_config, send_recovery, send_failure, send_degraded, ssl_expiry,
           ssl_expiry_threshold, auto_subscribe, account_id, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING *`,
        [...this.#values(input), accountId, nowIso()],
      );
      if (!row) throw new Error('inserting an alert channel returned no row');
      await this.#replaceSubscriptions(row.id, input.subscriptions);
      return this.#toChannel(row);
    });
  }

  async update(accountId: string, id: number, input: AlertChannelInput): Promise<StoredAlertChannel | undefined> {
    return this.#db.transaction(async () => {
      const row = await this.#db.get<ChannelRow>(
        `UPDATE alert_channels SET type = ?, sealed_config = ?, send_recovery = ?, send_failure = ?, send_degraded = ?,
           ssl_expiry = ?, ssl_expiry_threshold = ?, auto_subscribe = ?, updated_at = ?
         WHERE id = ? AND account_id = ? RETURNING *`,
        [...this.#values(input), nowIso(), id, accountId],
      );
      if (!row) return undefined;
      await this.#replaceSubscriptions(id, input.subscriptions);
      return this.#toChannel(row);
    });
  }

  async delete(accountId: string, id: number): Promise<boolean> {
    return (
      (await this.#db.run('DELETE FROM alert_channels WHERE id = ? AND account_id = ?', [id, accountId])).changes > 0
    );
  }

  async putSubscription(
    accountId: string,
    channelId: number,
    input: AlertChannelSubscriptionInput,
  ): Promise<AlertChannelSubscription | undefined> {
    return this.#db.transaction(async () => {
      const owned = await this.#db.get('SELECT 1 AS owned FROM alert_channels WHERE id = ? AND account_id = ?', [
        channelId,
        accountId,
      ]);
      return owned ? this.#upsertSubscription(channelId, input) : undefined;
    });
  }

  async listSubscribedTo(accountId: string, checkId: string, groupId: number | null): Promise<AlertChannelTarget[]> {
    const rows = await this.#db.all<ChannelRow>(
      `SELECT * FROM alert_channels WHERE account_id = ? AND id IN (
         SELECT channel_id FROM alert_channel_subscriptions WHERE activated = 1 AND (check_id = ? OR group_id = ?))
       ORDER BY id`,
      [accountId, checkId, groupId],
    );
    return rows.map((r) => this.#toTarget(r));
  }

  async getTarget(accountId: string, id: number): Promise<AlertChannelTarget | undefined> {
    const row = await this.#row(accountId, id);
    return row && this.#toTarget(row);
  }

  async subscribeNew(
    accountId: string,
    subscriber: Subscriber,
    given: ChannelRef[],
    autoAssign: boolean,
  ): Promise<void> {
    const [column, id] = subscriberColumn(subscriber);
    await this.#db.transaction(async () => {
      await this.#insertRefs(accountId, column, id, given);
      if (!autoAssign) return;
      // The given list was inserted first, so its activated flag wins for a channel it names.
      await this.#db.run(
        `INSERT INTO alert_channel_subscriptions (channel_id, ${column}, activated)
         SELECT id, ${typedSubscriber(column)}, 1 FROM alert_channels WHERE account_id = ? AND auto_subscribe = 1
         ON CONFLICT DO NOTHING`,
        [id, accountId],
      );
    });
  }

  async replaceSubscriptionsOf(accountId: string, subscriber: Subscriber, refs: ChannelRef[]): Promise<void> {
    const [column, id] = subscriberColumn(subscriber);
    await this.#db.transaction(async () => {
      await this.#db.run(
        `DELETE FROM alert_channel_subscriptions WHERE ${column} = ?
           AND channel_id IN (SELECT id FROM alert_channels WHERE account_id = ?)`,
        [id, accountId],
      );
      await this.#insertRefs(accountId, column, id, refs);
    });
  }

  /** Inserts the subscriptions of channels of the account; others (deleted meanwhile) are skipped. */
  async #insertRefs(
    accountId: string,
    column: SubscriberColumn,
    id: string | number,
    refs: ChannelRef[],
  ): Promise<void> {
    const insert = `INSERT INTO alert_channel_subscriptions (channel_id, ${column}, activated)
       SELECT id, ${typedSubscriber(column)}, CAST(? AS BIGINT) FROM alert_channels WHERE id = ? AND account_id = ?
       ON CONFLICT (channel_id, ${column}) DO UPDATE SET activated = excluded.activated`;
    for (const ref of refs) await this.#db.run(insert, [id, ref.activated ? 1 : 0, ref.alertChannelId, accountId]);
  }

  async checkSubscriptions(accountId: string, checkIds: string[]): Promise<Map<string, ChannelRef[]>> {
    return this.#refsOf(accountId, 'check_id', checkIds);
  }

  async groupSubscriptions(accountId: string, groupIds: number[]): Promise<Map<number, ChannelRef[]>> {
    return this.#refsOf(accountId, 'group_id', groupIds);
  }

  async #refsOf<K extends string | number>(
    accountId: string,
    column: SubscriberColumn,
    ids: K[],
  ): Promise<Map<K, ChannelRef[]>> {
    const byId = new Map<K, ChannelRef[]>(ids.map((id) => [id, []]));
    const rows = await this.#db.all<{ owner: K; channel_id: number; activated: number }>(
      `SELECT s.${column} AS owner, s.channel_id, s.activated FROM alert_channel_subscriptions s
       JOIN alert_channels c ON c.id = s.channel_id AND c.account_id = ?
       WHERE s.${column} IN ${idsIn(this.#db.dialect, column)} ORDER BY s.channel_id`,
      [accountId, JSON.stringify(ids)],
    );
    for (const r of rows) byId.get(r.owner)?.push({ alertChannelId: r.channel_id, activated: r.activated === 1 });
    return byId;
  }

  async ownedIds(accountId: string, ids: number[]): Promise<Set<number>> {
    const rows = await this.#db.all<{ id: number }>(
      `SELECT id FROM alert_channels WHERE account_id = ? AND id IN ${idsIn(this.#db.dialect, 'id')}`,
      [accountId, JSON.stringify(ids)],
    );
    return new Set(rows.map((r) => r.id));
  }
}
