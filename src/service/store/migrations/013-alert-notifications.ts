/**
 * Alert notifications: one row per alert and channel, written by the fan-out (alerting/fanout.ts)
 * before anything is sent, and worked off by the delivery worker (notify/alert-delivery.ts).
 * `check_alerts.fanned_out_at` marks the alerts already fanned out (NULL: still to do, found
 * through a partial index, so the pending scan never reads the history). A deleted channel keeps
 * its notifications' history: alert_channel_id is a plain column, no foreign key, so the history
 * still names the channel; alert_config holds its config as it was, masked.
 */
import type { Migration, MigrationDb } from './index.ts';

export const migration013: Migration = {
  version: 13,
  name: 'alert-notifications',
  async up(db: MigrationDb) {
    await db.ddl(`
      ALTER TABLE check_alerts ADD COLUMN fanned_out_at TEXT;
      ALTER TABLE check_alerts ADD COLUMN suppressed_reason TEXT;
      -- Alerts recorded before notifications existed are history, not work.
      UPDATE check_alerts SET fanned_out_at = created_at;
      CREATE INDEX check_alerts_fanout_pending ON check_alerts(id) WHERE fanned_out_at IS NULL;

      CREATE TABLE alert_notifications (
        id                  TEXT PRIMARY KEY,
        account_id          TEXT NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
        check_id            TEXT NOT NULL,
        check_alert_id      INTEGER NOT NULL REFERENCES check_alerts(id) ON DELETE CASCADE,
        alert_channel_id    INTEGER NOT NULL,
        channel_type        TEXT NOT NULL,
        alert_type          TEXT NOT NULL,
        message             TEXT NOT NULL,
        alert_config        TEXT NOT NULL,
        state               TEXT NOT NULL,
        attempts            INTEGER NOT NULL,
        next_attempt_at     TEXT NOT NULL,
        last_attempt_at     TEXT,
        last_error          TEXT,
        notification_result TEXT,
        created_at          TEXT NOT NULL,
        sent_at             TEXT,
        UNIQUE (check_alert_id, alert_channel_id)
      );
      CREATE INDEX alert_notifications_due ON alert_notifications(next_attempt_at) WHERE state = 'pending';
      CREATE INDEX alert_notifications_account ON alert_notifications(account_id, created_at);
      CREATE INDEX alert_notifications_channel ON alert_notifications(account_id, alert_channel_id, created_at);
    `);
  },
};
