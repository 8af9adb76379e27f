/**
 * The public API's tables: accounts and their API keys, private locations and their keys, checks
 * and the results agents report. The dispatcher's tables (runs, agents, error reports) come in 002.
 */
import type { Migration, MigrationDb } from './index.ts';

export const migration001: Migration = {
  version: 1,
  name: 'core',
  async up(db: MigrationDb) {
    await db.ddl(`
      CREATE TABLE accounts (
        id         TEXT PRIMARY KEY,
        name       TEXT NOT NULL,
        created_at TEXT NOT NULL
      );

      -- Keys are stored only as SHA-256 hashes; masked_key is what listings show.
      CREATE TABLE api_keys (
        id         TEXT PRIMARY KEY,
        account_id TEXT NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
        key_hash   TEXT NOT NULL UNIQUE,
        masked_key TEXT NOT NULL,
        created_at TEXT NOT NULL,
        revoked_at TEXT
      );
      CREATE INDEX api_keys_account ON api_keys(account_id);

      CREATE TABLE private_locations (
        id         TEXT PRIMARY KEY,
        account_id TEXT NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
        name       TEXT NOT NULL,
        slug_name  TEXT NOT NULL,
        icon       TEXT NOT NULL,
        proxy_url  TEXT,
        created_at TEXT NOT NULL,
        updated_at TEXT,
        UNIQUE (account_id, slug_name)
      );

      -- Deleted keys are removed outright: a revoked key has no further use and keeping its hash
      -- would only make the "at most two active keys" rule harder to read.
      CREATE TABLE location_keys (
        id          TEXT PRIMARY KEY,
        location_id TEXT NOT NULL REFERENCES private_locations(id) ON DELETE CASCADE,
        key_hash    TEXT NOT NULL UNIQUE,
        masked_key  TEXT NOT NULL,
        created_at  TEXT NOT NULL,
        updated_at  TEXT
      );
      CREATE INDEX location_keys_location ON location_keys(location_id);

      -- seq gives a stable creation order for paging; body is the accepted JSON as GET returns it.
      CREATE TABLE checks (
        seq              INTEGER PRIMARY KEY AUTOINCREMENT,
        id               TEXT NOT NULL UNIQUE,
        account_id       TEXT NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
        check_type       TEXT NOT NULL,
        name             TEXT NOT NULL,
        activated        INTEGER NOT NULL,
        muted            INTEGER NOT NULL,
        frequency        INTEGER NOT NULL,
        frequency_offset INTEGER,
        body             TEXT NOT NULL,
        created_at       TEXT NOT NULL,
        updated_at       TEXT
      );
      CREATE INDEX checks_account ON checks(account_id, seq);

      -- No cascade from locations: deleting a location that checks still use is refused (409),
      -- so a check never silently loses the place it runs.
      CREATE TABLE check_locations (
        check_id    TEXT NOT NULL REFERENCES checks(id) ON DELETE CASCADE,
        location_id TEXT NOT NULL REFERENCES private_locations(id),
        position    INTEGER NOT NULL,
        PRIMARY KEY (check_id, location_id)
      );
      CREATE INDEX check_locations_location ON check_locations(location_id);

      -- seq is the newest-first paging key and the public checkRunId. run_id is UNIQUE so that a
      -- retried upload (or two racing ones) stores one result: the index decides, not app code.
      -- location_id has no foreign key: results outlive a deleted location, run_location keeps
      -- the slug they ran at.
      CREATE TABLE results (
        seq          INTEGER PRIMARY KEY AUTOINCREMENT,
        id           TEXT NOT NULL UNIQUE,
        account_id   TEXT NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
        check_id     TEXT NOT NULL REFERENCES checks(id) ON DELETE CASCADE,
        run_id       TEXT NOT NULL UNIQUE,
        check_name   TEXT NOT NULL,
        location_id  TEXT NOT NULL,
        run_location TEXT NOT NULL,
        attempts     INTEGER NOT NULL,
        created_at   TEXT NOT NULL,
        payload      TEXT NOT NULL
      );
      CREATE INDEX results_check ON results(account_id, check_id, seq);
    `);
  },
};
