/**
 * Check triggers: one token per check whose URL runs the check now, without an API key (the
 * reference's CheckTrigger). The same shape as check_group_triggers (migration 005); deleting the
 * check deletes its trigger, and the UNIQUE check_id is the index that cascade uses.
 */
import type { Migration, MigrationDb } from './index.ts';

export const migration030: Migration = {
  version: 30,
  name: 'check-triggers',
  async up(db: MigrationDb) {
    await db.ddl(`
      -- Numeric ids as in the reference; AUTOINCREMENT so a deleted trigger's id is never reused.
      CREATE TABLE check_triggers (
        id          INTEGER PRIMARY KEY AUTOINCREMENT,
        check_id    TEXT NOT NULL UNIQUE REFERENCES checks(id) ON DELETE CASCADE,
        account_id  TEXT NOT NULL,
        token       TEXT NOT NULL UNIQUE,
        created_at  TEXT NOT NULL,
        called_at   TEXT,
        updated_at  TEXT
      ) STRICT;
    `);
  },
};
