/** Maintenance windows (/v1/maintenance-windows): tag lists are JSON arrays of strings. */
import type { Migration, MigrationDb } from './index.ts';

export const migration011: Migration = {
  version: 11,
  name: 'maintenance-windows',
  async up(db: MigrationDb) {
    await db.ddl(`
      CREATE TABLE maintenance_windows (
        id                  INTEGER PRIMARY KEY AUTOINCREMENT,
        account_id          TEXT NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
        name                TEXT NOT NULL,
        tags                TEXT NOT NULL,
        starts_at           TEXT NOT NULL,
        ends_at             TEXT NOT NULL,
        repeat_unit         TEXT CHECK (repeat_unit IN ('DAY', 'WEEK', 'MONTH')),
        repeat_interval     INTEGER,
        repeat_ends_at      TEXT,
        description         TEXT,
        pause_all_checks    INTEGER NOT NULL,
        silence_alerts_tags TEXT NOT NULL,
        silence_all_alerts  INTEGER NOT NULL,
        created_at          TEXT NOT NULL,
        updated_at          TEXT
      ) STRICT;
      CREATE INDEX maintenance_windows_account ON maintenance_windows (account_id, id);
    `);
  },
};
