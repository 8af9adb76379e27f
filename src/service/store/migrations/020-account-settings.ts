/**
 * Account settings, starting with `badgesEnabled`: status badges are served without an API key (they
 * are embedded in READMEs), so an account opts in before any of its checks or groups answers one.
 * A table of its own rather than columns on `accounts`: an account without a row has every setting
 * at its default (badges off).
 */
import type { Migration, MigrationDb } from './index.ts';

export const migration020: Migration = {
  version: 20,
  name: 'account-settings',
  async up(db: MigrationDb) {
    await db.ddl(`
      CREATE TABLE account_settings (
        account_id     TEXT PRIMARY KEY REFERENCES accounts(id) ON DELETE CASCADE,
        badges_enabled INTEGER NOT NULL DEFAULT 0,
        updated_at     TEXT NOT NULL
      ) STRICT;
    `);
  },
};
