/**
 * Alert notifications (migration 013): the fan-out's one transaction per alert, and the leased
 * claims of the delivery worker (the same scheme as the subscriber outbox, ./outbox.ts). On
 * PostgreSQL a claim locks the rows it takes and skips those another replica's claim holds, so two
 * replicas never deliver one notification twice.
 */
import type { AlertChannelType } from '../../alert-channels/channel-config.ts';
import type { AlertMessage } from '../../notify/channels/types.ts';
import type {
  AlertNotificationDraft,
  AlertNotificationQuery,
  AlertNotificationRecord,
  AlertNotificationRepo,
  AlertNotificationState,
} from '../alert-notification-types.ts';
import type { CheckAlertRecord } from '../check-status-types.ts';
import { type AlertRow, toAlert } from './check-alerts.ts';
import { READ_COMMITTED, type SqlDatabase } from '../sql/database.ts';
import { dialectSql } from '../sql/dialect-sql.ts';
import { countPending, nextPendingDueAt } from './pending-deliveries.ts';

interface NotificationRow {
  id: string;
  account_id: string;
  check_id: string;
  check_alert_id: number;
  alert_channel_id: number;
  channel_type: string;
  message: string;
  alert_config: string;
  state: string;
  attempts: number;
  next_attempt_at: string;
  last_attempt_at: string | null;
  last_error: string | null;
  notification_result: string | null;
  created_at: string;
  sent_at: string | null;
}

const toRecord = (row: NotificationRow): AlertNotificationRecord => ({
  id: row.id,
  accountId: row.account_id,
  checkId: row.check_id,
  checkAlertId: row.check_alert_id,
  alertChannelId: row.alert_channel_id,
  channelType: row.channel_type as AlertChannelType,
  message: JSON.parse(row.message) as AlertMessage,
  alertConfig: JSON.parse(row.alert_config) as AlertNotificationRecord['alertConfig'],
  state: row.state as AlertNotificationState,
  attempts: row.attempts,
  nextAttemptAt: row.next_attempt_at,
  lastAttemptAt: row.last_attempt_at,
  lastError: row.last_error,
  notificationResult: row.notification_result,
  createdAt: row.created_at,
  sentAt: row.sent_at,
});

// The channel must still be the account's: one deleted since the fan-out read it is skipped.
const QUEUE = `INSERT INTO alert_notifications (id, account_id, check_id, check_alert_id, alert_channel_id, channel_type, alert_type,
    message, alert_config, state, attempts, next_attempt_at, created_at)
  SELECT CAST(? AS TEXT), CAST(? AS TEXT), CAST(? AS TEXT), CAST(? AS BIGINT), id, CAST(? AS TEXT), CAST(? AS TEXT), CAST(? AS TEXT),
    CAST(? AS TEXT), 'pending', 0, CAST(? AS TEXT), CAST(? AS TEXT)
  FROM alert_channels WHERE id = ? AND account_id = ?
  ON CONFLICT (check_alert_id, alert_channel_id) DO NOTHING`;

/** Newest first; an alert's notifications in the order the fan-out queued them (by channel). */
const NEWEST_FIRST = 'ORDER BY created_at DESC, check_alert_id DESC, alert_channel_id DESC';

export class SqlAlertNotificationRepo implements AlertNotificationRepo {
  readonly #db: SqlDatabase;
  readonly #claim: string;
  constructor(db: SqlDatabase) {
    this.#db = db;
    // One statement: the rows it returns are leased, so a second worker cannot claim them meanwhile.
    this.#claim = `UPDATE alert_notifications SET next_attempt_at = ?, last_attempt_at = ?, attempts = attempts + 1
      WHERE id IN (SELECT id FROM alert_notifications WHERE state = 'pending' AND next_attempt_at <= ?
                   ORDER BY next_attempt_at LIMIT ? ${dialectSql(db.dialect).forUpdateSkipLocked})
      RETURNING *`;
  }

  async pendingAlerts(limit: number): Promise<CheckAlertRecord[]> {
    const rows = await this.#db.all<AlertRow>(
      'SELECT * FROM check_alerts WHERE fanned_out_at IS NULL ORDER BY id LIMIT ?',
      [limit],
    );
    return rows.map(toAlert);
  }

  async fanOut(
    alertId: number,
    drafts: AlertNotificationDraft[],
    suppressedReason: string | null,
    now: Date,
  ): Promise<number> {
    const at = now.toISOString();
    return this.#db.transaction(async () => {
      const alert = await this.#db.get<{
        account_id: string;
        check_id: string;
        alert_type: string;
        fanned_out_at: string | null;
      }>('SELECT account_id, check_id, alert_type, fanned_out_at FROM check_alerts WHERE id = ?', [alertId]);
      if (!alert || alert.fanned_out_at !== null) return 0;
      let queued = 0;
      for (const d of drafts) {
        const message = JSON.stringify(d.message);
        const config = JSON.stringify(d.alertConfig);
        const args = [d.channelType, alert.alert_type, message, config, at, at, d.alertChannelId, alert.account_id];
        queued += (
          await this.#db.run(QUEUE, [d.message.notificationId, alert.account_id, alert.check_id, alertId, ...args])
        ).changes;
      }
      await this.#db.run('UPDATE check_alerts SET fanned_out_at = ?, suppressed_reason = ? WHERE id = ?', [
        at,
        suppressedReason,
        alertId,
      ]);
      return queued;
    });
  }

  async claimDue(now: Date, limit: number, leaseMs: number): Promise<AlertNotificationRecord[]> {
    const leasedUntil = new Date(now.getTime() + leaseMs).toISOString();
    const rows = await this.#db.transaction(
      () => this.#db.all<NotificationRow>(this.#claim, [leasedUntil, now.toISOString(), now.toISOString(), limit]),
      READ_COMMITTED,
    );
    return rows.map(toRecord);
  }

  async markDelivered(id: string, at: Date, result: string | null): Promise<void> {
    await this.#db.run(
      `UPDATE alert_notifications SET state = 'delivered', sent_at = ?, last_error = NULL, notification_result = ? WHERE id = ?`,
      [at.toISOString(), result, id],
    );
  }

  async reschedule(id: string, nextAttemptAt: Date, error: string, result: string | null): Promise<void> {
    await this.#db.run(
      `UPDATE alert_notifications SET next_attempt_at = ?, last_error = ?, notification_result = ? WHERE id = ? AND state = 'pending'`,
      [nextAttemptAt.toISOString(), error, result, id],
    );
  }

  async markFailed(id: string, error: string, result: string | null): Promise<void> {
    await this.#db.run(
      `UPDATE alert_notifications SET state = 'failed', last_error = ?, notification_result = ? WHERE id = ?`,
      [error, result, id],
    );
  }

  nextDueAt(): Promise<string | null> {
    return nextPendingDueAt(this.#db, 'alert_notifications');
  }

  pendingCount(): Promise<number> {
    return countPending(this.#db, 'alert_notifications');
  }

  async list(accountId: string, q: AlertNotificationQuery): Promise<AlertNotificationRecord[]> {
    const where = ['account_id = ?', 'created_at >= ?', 'created_at < ?'];
    const args: Array<string | number> = [accountId, q.from, q.to];
    if (q.alertChannelId !== undefined) {
      where.push('alert_channel_id = ?');
      args.push(q.alertChannelId);
    }
    if (q.hasFailures !== undefined) where.push(q.hasFailures ? `state = 'failed'` : `state <> 'failed'`);
    const rows = await this.#db.all<NotificationRow>(
      `SELECT * FROM alert_notifications WHERE ${where.join(' AND ')} ${NEWEST_FIRST} LIMIT ? OFFSET ?`,
      [...args, q.limit, (q.page - 1) * q.limit],
    );
    return rows.map(toRecord);
  }

  async forAlert(alertId: number): Promise<{
    fannedOutAt: string | null;
    suppressedReason: string | null;
    notifications: AlertNotificationRecord[];
  }> {
    const mark = await this.#db.get<{ fanned_out_at: string | null; suppressed_reason: string | null }>(
      'SELECT fanned_out_at, suppressed_reason FROM check_alerts WHERE id = ?',
      [alertId],
    );
    const rows = await this.#db.all<NotificationRow>(
      'SELECT * FROM alert_notifications WHERE check_alert_id = ? ORDER BY alert_channel_id',
      [alertId],
    );
    return {
      fannedOutAt: mark?.fanned_out_at ?? null,
      suppressedReason: mark?.suppressed_reason ?? null,
      notifications: rows.map(toRecord),
    };
  }
}
