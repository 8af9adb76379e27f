/**
 * The notification outbox: deliveries to status page subscribers, written in the same transaction
 * as the incident update that causes them (enqueueIncidentNotifications), and worked off by
 * notify/outbox-worker.ts. See docs/api.md "Subscriber notifications" for the guarantees.
 */
import { randomUUID } from 'node:crypto';
import type { SecretBox } from '../../secrets/box.ts';
import { READ_COMMITTED, type SqlDatabase } from '../sql/database.ts';
import { dialectSql } from '../sql/dialect-sql.ts';
import { countPending, nextPendingDueAt } from './pending-deliveries.ts';
import type {
  ConfirmationRequest,
  IncidentNotification,
  IncidentRecord,
  IncidentUpdateRecord,
  OutboxChannel,
  OutboxEntry,
  OutboxKind,
  OutboxMessage,
  OutboxRepo,
  OutboxState,
  SubscribedPage,
} from '../status-pages-types.ts';

interface OutboxRow {
  id: string;
  account_id: string;
  kind: string;
  subscription_id: string | null;
  channel: string;
  address: string;
  sealed_secret: string | null;
  sealed_unsubscribe_token: string | null;
  sealed_confirm_token: string | null;
  payload: string;
  state: string;
  attempts: number;
  next_attempt_at: string;
  last_error: string | null;
  created_at: string;
  delivered_at: string | null;
}

const COLUMNS =
  'id, account_id, kind, subscription_id, channel, address, sealed_secret, sealed_unsubscribe_token, sealed_confirm_token, payload, state, attempts, next_attempt_at, last_error, created_at, delivered_at';

const openOrNull = (box: SecretBox, sealed: string | null): string | null =>
  sealed === null ? null : box.open(sealed);

/** The row's kind with its payload, which the kind's writer froze as JSON. */
const toMessage = (kind: OutboxKind, payload: string): OutboxMessage =>
  kind === 'confirmation'
    ? { kind, payload: JSON.parse(payload) as ConfirmationRequest }
    : { kind, payload: JSON.parse(payload) as IncidentNotification };

/** A row as the worker uses it: the webhook secret and link tokens opened, only in memory. */
const toEntry = (box: SecretBox, row: OutboxRow): OutboxEntry => ({
  id: row.id,
  accountId: row.account_id,
  subscriptionId: row.subscription_id,
  channel: row.channel as OutboxChannel,
  address: row.address,
  secret: openOrNull(box, row.sealed_secret),
  unsubscribeToken: openOrNull(box, row.sealed_unsubscribe_token),
  confirmToken: openOrNull(box, row.sealed_confirm_token),
  ...toMessage(row.kind as OutboxKind, row.payload),
  state: row.state as OutboxState,
  attempts: row.attempts,
  nextAttemptAt: row.next_attempt_at,
  lastError: row.last_error,
  createdAt: row.created_at,
  deliveredAt: row.delivered_at,
});

interface RecipientRow {
  id: string;
  type: string;
  address: string;
  address_key: string;
  /** Sealed, as the token below; copied as they are, so neither is opened to queue a delivery. */
  sealed_secret: string | null;
  sealed_unsubscribe_token: string | null;
}

/** The order rows of sp_subscriptions or notification_outbox were written in: rowid, or seq on PostgreSQL (migration 023). */

/** The pages of the incident's account that show any of its services. */
async function pagesShowing(
  db: SqlDatabase,
  incident: IncidentRecord,
): Promise<{ id: string; name: string; url: string }[]> {
  return db.all(
    `SELECT DISTINCT p.id, p.name, p.url, p.seq FROM incident_services i
     JOIN status_page_card_services cs ON cs.service_id = i.service_id
     JOIN status_page_cards c ON c.id = cs.card_id
     JOIN status_pages p ON p.id = c.status_page_id
     WHERE i.incident_id = ? AND p.account_id = ? ORDER BY p.seq`,
    [incident.id, incident.accountId],
  );
}

function notificationOf(
  incident: IncidentRecord,
  update: IncidentUpdateRecord,
  pages: { id: string; name: string; url: string }[],
): IncidentNotification {
  return {
    incident: {
      id: incident.id,
      name: incident.name,
      severity: incident.severity,
      lastUpdateStatus: incident.lastUpdateStatus,
      services: incident.services.map((s) => ({ id: s.id, name: s.name })),
    },
    incidentUpdate: {
      id: update.id,
      description: update.description,
      status: update.status,
      publicIncidentUpdateDate: update.publicIncidentUpdateDate,
    },
    statusPages: pages.map((p) => ({ id: p.id, name: p.name, url: p.url })),
  };
}

/**
 * Queues one delivery per distinct recipient (type and address) among the VERIFIED subscribers of
 * every status page of the account that shows any of the incident's services. Must run inside the
 * transaction that wrote the update. The unique key (update, channel, address) makes it idempotent:
 * saving the same update again queues only recipients not yet queued. Returns how many it queued.
 */
export async function enqueueIncidentNotifications(
  db: SqlDatabase,
  incident: IncidentRecord,
  update: IncidentUpdateRecord,
  now: string,
): Promise<number> {
  const pages = await pagesShowing(db, incident);
  if (pages.length === 0) return 0;
  const recipients = await db.all<RecipientRow>(
    `SELECT s.id, s.type, s.address, s.address_key, s.sealed_secret, s.sealed_unsubscribe_token FROM sp_subscriptions s
     WHERE s.status = 'VERIFIED' AND s.status_page_id IN (${pages.map(() => '?').join(', ')})
     ORDER BY ${dialectSql(db.dialect).insertionOrder('s')}`,
    pages.map((p) => p.id),
  );
  const json = JSON.stringify(notificationOf(incident, update, pages));
  let queued = 0;
  for (const r of recipients) {
    const { changes } = await db.run(
      `INSERT INTO notification_outbox (id, account_id, kind, incident_update_id, subscription_id, channel, address, address_key,
         sealed_secret, sealed_unsubscribe_token, payload, state, attempts, next_attempt_at, created_at)
       VALUES (?, ?, 'incident', ?, ?, ?, ?, ?, ?, ?, ?, 'pending', 0, ?, ?)
       ON CONFLICT (incident_update_id, channel, address_key) DO NOTHING`,
      [
        randomUUID(),
        incident.accountId,
        update.id,
        r.id,
        r.type,
        r.address,
        r.address_key,
        r.sealed_secret,
        r.sealed_unsubscribe_token,
        json,
        now,
        now,
      ],
    );
    queued += changes;
  }
  return queued;
}

/**
 * Queues the confirmation of one PENDING subscription, copying its recipient and sealed secret and
 * unsubscribe token as an incident delivery does. Must run inside the transaction that made (or
 * re-sent) the subscription, so a subscription is never left waiting for a message nobody queued.
 */
export async function enqueueConfirmation(
  db: SqlDatabase,
  c: { page: SubscribedPage; subscriptionId: string; sealedConfirmToken: string; expiresAt: string; now: string },
): Promise<void> {
  const payload: ConfirmationRequest = {
    statusPage: { id: c.page.id, name: c.page.name, url: c.page.url },
    expiresAt: c.expiresAt,
  };
  await db.run(
    `INSERT INTO notification_outbox (id, account_id, kind, subscription_id, channel, address, address_key, sealed_secret,
       sealed_unsubscribe_token, sealed_confirm_token, payload, state, attempts, next_attempt_at, created_at)
     SELECT CAST(? AS TEXT), CAST(? AS TEXT), 'confirmation', id, type, address, address_key, sealed_secret, sealed_unsubscribe_token,
       CAST(? AS TEXT), CAST(? AS TEXT), 'pending', 0, CAST(? AS TEXT), CAST(? AS TEXT)
     FROM sp_subscriptions WHERE id = ?`,
    [randomUUID(), c.page.accountId, c.sealedConfirmToken, JSON.stringify(payload), c.now, c.now, c.subscriptionId],
  );
}

export class SqlOutboxRepo implements OutboxRepo {
  readonly #db: SqlDatabase;
  readonly #box: SecretBox;
  constructor(db: SqlDatabase, box: SecretBox) {
    this.#db = db;
    this.#box = box;
  }

  async claimDue(now: Date, limit: number, leaseMs: number): Promise<OutboxEntry[]> {
    // One statement: the rows it returns are leased (due again only when the lease runs out), so a
    // second worker on the same database cannot claim them meanwhile. On PostgreSQL the rows another
    // replica is claiming at this moment are locked: skipping them (read committed, so no
    // serialization failure either) means each row goes to exactly one of the claims.
    const rows = await this.#db.transaction(
      () =>
        this.#db.all<OutboxRow>(
          `UPDATE notification_outbox SET next_attempt_at = ?, attempts = attempts + 1
           WHERE id IN (SELECT id FROM notification_outbox WHERE state = 'pending' AND next_attempt_at <= ?
                        ORDER BY next_attempt_at LIMIT ? ${dialectSql(this.#db.dialect).forUpdateSkipLocked})
           RETURNING ${COLUMNS}`,
          [new Date(now.getTime() + leaseMs).toISOString(), now.toISOString(), limit],
        ),
      READ_COMMITTED,
    );
    return rows.map((row) => toEntry(this.#box, row));
  }

  async markDelivered(id: string, at: Date): Promise<void> {
    await this.#db.run(
      `UPDATE notification_outbox SET state = 'delivered', delivered_at = ?, last_error = NULL WHERE id = ?`,
      [at.toISOString(), id],
    );
  }

  async reschedule(id: string, nextAttemptAt: Date, error: string): Promise<void> {
    await this.#db.run(
      `UPDATE notification_outbox SET next_attempt_at = ?, last_error = ? WHERE id = ? AND state = 'pending'`,
      [nextAttemptAt.toISOString(), error, id],
    );
  }

  async markFinal(id: string, state: 'failed' | 'undeliverable', reason: string): Promise<void> {
    await this.#db.run('UPDATE notification_outbox SET state = ?, last_error = ? WHERE id = ?', [state, reason, id]);
  }

  nextDueAt(): Promise<string | null> {
    return nextPendingDueAt(this.#db, 'notification_outbox');
  }

  pendingCount(): Promise<number> {
    return countPending(this.#db, 'notification_outbox');
  }

  async get(id: string): Promise<OutboxEntry | undefined> {
    const row = await this.#db.get<OutboxRow>(`SELECT ${COLUMNS} FROM notification_outbox WHERE id = ?`, [id]);
    return row && toEntry(this.#box, row);
  }

  async listForUpdate(incidentUpdateId: string): Promise<OutboxEntry[]> {
    const rows = await this.#db.all<OutboxRow>(
      `SELECT ${COLUMNS} FROM notification_outbox o WHERE o.incident_update_id = ? ORDER BY ${dialectSql(this.#db.dialect).insertionOrder('o')}`,
      [incidentUpdateId],
    );
    return rows.map((row) => toEntry(this.#box, row));
  }
}
