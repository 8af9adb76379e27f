/**
 * Account environment variables (/v1/variables), snippets (/v1/snippets) and the secrets key marker.
 *
 * Variable values are stored sealed (AES-256-GCM, src/service/secrets/box.ts), all of them, not only
 * secret ones: the column never holds plain text. The marker row is a known value sealed with the
 * key in use when it was first written; at start it tells whether the configured key can open
 * what the database holds (src/service/store/repos/variables.ts verifySecretsMarker).
 */
import type { Migration, MigrationDb } from './index.ts';

export const migration007: Migration = {
  version: 7,
  name: 'variables-snippets',
  async up(db: MigrationDb) {
    await db.ddl(`
      CREATE TABLE environment_variables (
        account_id   TEXT NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
        key          TEXT NOT NULL,
        sealed_value TEXT NOT NULL,
        locked       INTEGER NOT NULL,
        secret       INTEGER NOT NULL,
        created_at   TEXT NOT NULL,
        updated_at   TEXT,
        PRIMARY KEY (account_id, key)
      ) STRICT;

      -- Numeric ids as in the reference (Snippet.id is a number); never reused after a delete.
      CREATE TABLE snippets (
        id         INTEGER PRIMARY KEY AUTOINCREMENT,
        account_id TEXT NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
        name       TEXT NOT NULL,
        script     TEXT NOT NULL,
        created_at TEXT NOT NULL,
        updated_at TEXT
      ) STRICT;
      CREATE INDEX snippets_account ON snippets (account_id, id);

      CREATE TABLE secrets_marker (
        id         INTEGER PRIMARY KEY CHECK (id = 1),
        key_id     TEXT NOT NULL,
        sealed     TEXT NOT NULL,
        created_at TEXT NOT NULL
      ) STRICT;
    `);
  },
};
