/**
 * Reminders, SSL alerts and results not yet applied to their check's status.
 * - check_statuses.next_reminder_at: when the standing alert's next reminder is due (ISO), null when
 *   none is; the reminder sweep finds due checks through its index instead of reading every status.
 *   Checks alerting before this migration are looked at once by the first sweep, which sets it right.
 * - check_alerts.ssl_days_remaining: the days an ALERT_SSL saw, which each channel compares with its
 *   own sslExpiryThreshold.
 * - results_status_pending: FINAL results stored but not yet applied to their check's status, with
 *   their run's due time (the state machine's run key; runs are pruned after a day). A result and its
 *   row are written in one transaction and the row is deleted in the status update's, so a service
 *   that dies between the two replays the result on start instead of losing its alert. WITHOUT
 *   ROWID: one b-tree to touch on the hot path instead of a table and its key's index.
 */
import type { Migration, MigrationDb } from './index.ts';

export const migration014: Migration = {
  version: 14,
  name: 'reminders',
  async up(db: MigrationDb) {
    await db.ddl(`
      ALTER TABLE check_statuses ADD COLUMN next_reminder_at TEXT;
      UPDATE check_statuses SET next_reminder_at = updated_at WHERE json_extract(alert_state, '$.state') <> 'PASSING';
      CREATE INDEX check_statuses_next_reminder ON check_statuses(next_reminder_at) WHERE next_reminder_at IS NOT NULL;

      ALTER TABLE check_alerts ADD COLUMN ssl_days_remaining INTEGER;

      CREATE TABLE results_status_pending (
        result_id TEXT PRIMARY KEY REFERENCES results(id) ON DELETE CASCADE,
        due_at    TEXT NOT NULL
      ) WITHOUT ROWID;
    `);
  },
};
