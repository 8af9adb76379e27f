/**
 * Check sessions (the reference's on-demand runs, POST /v2/check-sessions/trigger): one session per
 * check, one run per location it runs at. A session remembers its runs by id; each run's verdict is
 * read from the result stored for it (results.run_id is unique), so nothing here is written twice.
 *
 * `runs.session_id` marks a session's runs in the queue: claims take them first, they are never
 * superseded by a scheduled run, never retried, and their results move no check status and raise no
 * alert (docs/api.md "Check sessions"). Deleting the check or the account deletes its sessions.
 */
import type { Migration, MigrationDb } from './index.ts';

export const migration031: Migration = {
  version: 31,
  name: 'check-sessions',
  async up(db: MigrationDb) {
    await db.ddl(`
      CREATE TABLE check_sessions (
        id            TEXT PRIMARY KEY,
        account_id    TEXT NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
        check_id      TEXT NOT NULL REFERENCES checks(id) ON DELETE CASCADE,
        check_name    TEXT NOT NULL,
        check_type    TEXT NOT NULL,
        run_source    TEXT NOT NULL,
        started_at    TEXT NOT NULL,
        cancelled_at  TEXT
      ) STRICT;
      CREATE INDEX check_sessions_by_account ON check_sessions (account_id, started_at);
      CREATE INDEX check_sessions_by_check ON check_sessions (check_id);

      CREATE TABLE check_session_runs (
        run_id        TEXT PRIMARY KEY,
        session_id    TEXT NOT NULL REFERENCES check_sessions(id) ON DELETE CASCADE,
        location_id   TEXT NOT NULL,
        run_location  TEXT NOT NULL,
        position      INTEGER NOT NULL
      ) STRICT;
      CREATE INDEX check_session_runs_by_session ON check_session_runs (session_id, position);
    `);
    await db.ddl('ALTER TABLE runs ADD COLUMN session_id TEXT');
  },
};
