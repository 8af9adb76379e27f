/**
 * Check groups, their private locations and trigger tokens; the retry bookkeeping of runs (a run's
 * place in its retry chain, retries planned but not yet due) and the FINAL/ATTEMPT type of results.
 *
 * A check joins a group through `groupId` in its stored body; the expression index lets the group
 * find its members without a column the check repository would have to maintain.
 */
import type { Migration, MigrationDb } from './index.ts';

export const migration005: Migration = {
  version: 5,
  name: 'check-groups',
  async up(db: MigrationDb) {
    await db.ddl(`
      -- Numeric ids as in the reference; AUTOINCREMENT so a deleted group's id is never reused.
      CREATE TABLE check_groups (
        id          INTEGER PRIMARY KEY AUTOINCREMENT,
        account_id  TEXT NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
        name        TEXT NOT NULL,
        activated   INTEGER NOT NULL,
        muted       INTEGER NOT NULL,
        concurrency INTEGER NOT NULL,
        body        TEXT NOT NULL,
        created_at  TEXT NOT NULL,
        updated_at  TEXT
      ) STRICT;
      CREATE INDEX check_groups_account ON check_groups (account_id, id);

      -- No cascade from locations, as for checks: deleting a location a group runs on is refused.
      CREATE TABLE check_group_locations (
        group_id    INTEGER NOT NULL REFERENCES check_groups(id) ON DELETE CASCADE,
        location_id TEXT NOT NULL REFERENCES private_locations(id),
        position    INTEGER NOT NULL,
        PRIMARY KEY (group_id, location_id)
      ) STRICT;
      CREATE INDEX check_group_locations_location ON check_group_locations (location_id);

      CREATE TABLE check_group_triggers (
        id          INTEGER PRIMARY KEY AUTOINCREMENT,
        group_id    INTEGER NOT NULL UNIQUE REFERENCES check_groups(id) ON DELETE CASCADE,
        account_id  TEXT NOT NULL,
        token       TEXT NOT NULL UNIQUE,
        created_at  TEXT NOT NULL,
        called_at   TEXT,
        updated_at  TEXT
      ) STRICT;

      -- Members of a group (see SqlCheckGroupRepo.memberIds; the query repeats this expression).
      CREATE INDEX checks_group ON checks (account_id, json_extract(body, '$.groupId'))
        WHERE json_extract(body, '$.groupId') IS NOT NULL;

      ALTER TABLE runs ADD COLUMN retry_of TEXT;
      ALTER TABLE runs ADD COLUMN attempt INTEGER NOT NULL DEFAULT 1;
      ALTER TABLE runs ADD COLUMN chain_started_at TEXT;

      ALTER TABLE results ADD COLUMN result_type TEXT NOT NULL DEFAULT 'FINAL';
      CREATE INDEX results_check_type ON results (account_id, check_id, result_type, seq);

      -- A retry waits here until due; the dispatcher's sweep enqueues it as a run.
      CREATE TABLE pending_retries (
        retry_of         TEXT PRIMARY KEY,
        account_id       TEXT NOT NULL,
        check_id         TEXT NOT NULL,
        location_id      TEXT NOT NULL REFERENCES private_locations(id) ON DELETE CASCADE,
        attempt          INTEGER NOT NULL,
        chain_started_at TEXT NOT NULL,
        due_at           TEXT NOT NULL,
        created_at       TEXT NOT NULL
      ) STRICT;
      CREATE INDEX pending_retries_due ON pending_retries (due_at);
      CREATE INDEX pending_retries_check ON pending_retries (check_id);
    `);
  },
};
