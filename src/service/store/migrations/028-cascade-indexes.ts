/**
 * Deleting a check cascades to its results and alerts by `check_id` alone, and both tables were
 * indexed only by (account_id, check_id, …): each delete scanned every stored result. An alert's
 * notifications cascade by `check_alert_id`, which had no index either, nor did a few smaller
 * tables. These indexes make each cascade a range lookup, as a foreign key's child column should
 * have (test/service/foreign-key-indexes.test.ts keeps it so). The runs of a deleted location are
 * the exception, said there.
 */
import type { Migration, MigrationDb } from './index.ts';

export const migration028: Migration = {
  version: 28,
  name: 'cascade-indexes',
  async up(db: MigrationDb) {
    await db.ddl('CREATE INDEX results_by_check ON results (check_id)');
    await db.ddl('CREATE INDEX check_alerts_by_check ON check_alerts (check_id)');
    await db.ddl('CREATE INDEX alert_notifications_by_alert ON alert_notifications (check_alert_id)');
    await db.ddl('CREATE INDEX pending_retries_by_location ON pending_retries (location_id)');
    await db.ddl('CREATE INDEX dashboard_incidents_by_dashboard ON dashboard_incidents (dashboard_id)');
    await db.ddl('CREATE INDEX notification_outbox_by_account ON notification_outbox (account_id)');
    await db.ddl('CREATE INDEX console_sessions_by_account ON console_sessions (account_id)');
  },
};
