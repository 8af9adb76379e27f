/**
 * Heartbeats (ping state and events), dashboards with their viewer keys, and dashboard incidents
 * with their updates.
 *
 * A heartbeat check is a row in `checks` (check_type 'HEARTBEAT', no locations, so the scheduler
 * never runs it) plus one row here with what the monitor needs; both cascade from the check.
 */
import type { Migration, MigrationDb } from './index.ts';

export const migration004: Migration = {
  version: 4,
  name: 'heartbeats-dashboards',
  async up(db: MigrationDb) {
    await db.ddl(`
      -- Clock values are integer ms: the monitor compares and orders them on every sweep.
      CREATE TABLE heartbeat_states (
        check_id      TEXT PRIMARY KEY REFERENCES checks(id) ON DELETE CASCADE,
        account_id    TEXT NOT NULL,
        ping_token    TEXT NOT NULL UNIQUE,
        period_ms     INTEGER NOT NULL,
        grace_ms      INTEGER NOT NULL,
        status        TEXT NOT NULL CHECK (status IN ('PENDING', 'UP', 'FAILING')),
        anchor_ms     INTEGER NOT NULL,
        last_ping_at  TEXT,
        deadline_ms   INTEGER
      ) STRICT;
      -- The monitor's sweep and its "next deadline" query read only this index.
      CREATE INDEX heartbeat_states_deadline ON heartbeat_states (deadline_ms) WHERE deadline_ms IS NOT NULL;

      CREATE TABLE heartbeat_events (
        seq         INTEGER PRIMARY KEY AUTOINCREMENT,
        id          TEXT NOT NULL UNIQUE,
        account_id  TEXT NOT NULL,
        check_id    TEXT NOT NULL REFERENCES checks(id) ON DELETE CASCADE,
        state       TEXT NOT NULL CHECK (state IN ('RECEIVED', 'LATE', 'FAILING')),
        at_ms       INTEGER NOT NULL,
        source      TEXT,
        user_agent  TEXT
      ) STRICT;
      CREATE INDEX heartbeat_events_check_time ON heartbeat_events (check_id, at_ms);

      -- id is the reference's numeric dashboard id. The *_key columns hold the lower-cased custom URL
      -- and custom domain host: UNIQUE across all accounts, so the database, not a read-then-write
      -- check in app code, decides which of two racing requests gets a name (NULLs never collide).
      CREATE TABLE dashboards (
        id                 INTEGER PRIMARY KEY AUTOINCREMENT,
        account_id         TEXT NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
        body               TEXT NOT NULL,
        custom_url_key     TEXT UNIQUE,
        custom_domain_key  TEXT UNIQUE,
        created_at         TEXT NOT NULL,
        updated_at         TEXT
      ) STRICT;
      CREATE INDEX dashboards_account ON dashboards (account_id, id);

      -- Viewer keys of private dashboards: only a hash and the masked form are kept.
      CREATE TABLE dashboard_keys (
        id            TEXT PRIMARY KEY,
        dashboard_id  INTEGER NOT NULL REFERENCES dashboards(id) ON DELETE CASCADE,
        key_hash      TEXT NOT NULL UNIQUE,
        masked_key    TEXT NOT NULL,
        created_at    TEXT NOT NULL,
        updated_at    TEXT
      ) STRICT;
      CREATE INDEX dashboard_keys_dashboard ON dashboard_keys (dashboard_id);

      CREATE TABLE dashboard_incidents (
        seq           INTEGER PRIMARY KEY AUTOINCREMENT,
        id            TEXT NOT NULL UNIQUE,
        account_id    TEXT NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
        dashboard_id  INTEGER NOT NULL REFERENCES dashboards(id) ON DELETE CASCADE,
        name          TEXT NOT NULL,
        impact        TEXT NOT NULL CHECK (impact IN ('MAINTENANCE', 'MAJOR', 'MINOR')),
        started_at    TEXT,
        stopped_at    TEXT,
        created_at    TEXT NOT NULL,
        updated_at    TEXT
      ) STRICT;
      CREATE INDEX dashboard_incidents_account ON dashboard_incidents (account_id, seq);

      CREATE TABLE dashboard_incident_updates (
        seq          INTEGER PRIMARY KEY AUTOINCREMENT,
        id           TEXT NOT NULL UNIQUE,
        incident_id  TEXT NOT NULL REFERENCES dashboard_incidents(id) ON DELETE CASCADE,
        status       TEXT NOT NULL,
        description  TEXT NOT NULL,
        created_at   TEXT NOT NULL,
        updated_at   TEXT
      ) STRICT;
      CREATE INDEX dashboard_incident_updates_incident ON dashboard_incident_updates (incident_id, seq);
    `);
  },
};
