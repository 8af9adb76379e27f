/**
 * Check statuses (one row per check, read and written once per stored FINAL result) and check
 * alerts (the history of alert state transitions). Both go with their check.
 */
import type { Migration, MigrationDb } from './index.ts';

export const migration012: Migration = {
  version: 12,
  name: 'check-statuses',
  async up(db: MigrationDb) {
    await db.ddl(`
      CREATE TABLE check_statuses (
        check_id           TEXT PRIMARY KEY REFERENCES checks(id) ON DELETE CASCADE,
        account_id         TEXT NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
        has_failures       INTEGER NOT NULL,
        has_errors         INTEGER NOT NULL,
        is_degraded        INTEGER NOT NULL,
        longest_run        REAL,
        shortest_run       REAL,
        last_run_location  TEXT,
        last_check_run_id  TEXT,
        ssl_days_remaining INTEGER,
        alert_state        TEXT NOT NULL,
        created_at         TEXT NOT NULL,
        updated_at         TEXT
      );
      CREATE INDEX check_statuses_account ON check_statuses(account_id);

      CREATE TABLE check_alerts (
        id            INTEGER PRIMARY KEY AUTOINCREMENT,
        account_id    TEXT NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
        check_id      TEXT NOT NULL REFERENCES checks(id) ON DELETE CASCADE,
        name          TEXT NOT NULL,
        check_type    TEXT NOT NULL,
        alert_type    TEXT NOT NULL,
        run_location  TEXT NOT NULL,
        response_time REAL NOT NULL,
        error         TEXT,
        status_code   TEXT,
        result_id     TEXT NOT NULL,
        started_at    TEXT NOT NULL,
        created_at    TEXT NOT NULL
      );
      CREATE INDEX check_alerts_account ON check_alerts(account_id, created_at);
      CREATE INDEX check_alerts_check ON check_alerts(account_id, check_id, created_at);
    `);
  },
};
