/**
 * Sessions of the operator console (/app). Only a SHA-256 hash of each session token is stored, as
 * for API keys (keys.ts): a copy of the database lets nobody sign in. A session ends at
 * `expires_at` (absolute) or after a while without activity (`last_seen_at`, idle), whichever comes
 * first; signing out deletes its row. Deleting an account deletes its sessions.
 */
import type { Migration, MigrationDb } from './index.ts';

export const migration019: Migration = {
  version: 19,
  name: 'console-sessions',
  async up(db: MigrationDb) {
    await db.ddl(`
      CREATE TABLE console_sessions (
        token_hash   TEXT PRIMARY KEY,
        account_id   TEXT NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
        created_at   TEXT NOT NULL,
        expires_at   TEXT NOT NULL,
        last_seen_at TEXT NOT NULL
      );
      CREATE INDEX console_sessions_expiry ON console_sessions(expires_at);
    `);
  },
};
