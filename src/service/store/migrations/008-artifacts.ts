/**
 * Artifact metadata (screenshots, videos, traces, reports). The bytes are files under
 * DATA_DIR/artifacts, not in the database; see src/service/artifacts/.
 *
 * No foreign keys on purpose: artifacts may be uploaded before their result exists and outlive
 * their run row (runs are pruned after 24 h, results are not), and deleting a check must also
 * delete files, which a cascade cannot do. The retention sweeper finds rows whose check is gone
 * and deletes files and rows together.
 */
import type { Migration, MigrationDb } from './index.ts';

export const migration008: Migration = {
  version: 8,
  name: 'artifacts',
  async up(db: MigrationDb) {
    await db.ddl(`
      CREATE TABLE artifacts (
        account_id   TEXT NOT NULL,
        run_id       TEXT NOT NULL,
        name         TEXT NOT NULL,
        location_id  TEXT NOT NULL,
        check_id     TEXT NOT NULL,
        kind         TEXT NOT NULL,
        content_type TEXT NOT NULL,
        size         INTEGER NOT NULL,
        sha256       TEXT NOT NULL,
        complete     INTEGER NOT NULL DEFAULT 0,
        created_at   TEXT NOT NULL,
        completed_at TEXT,
        PRIMARY KEY (run_id, name)
      ) STRICT;
      CREATE INDEX artifacts_check ON artifacts (check_id);
      CREATE INDEX artifacts_incomplete ON artifacts (created_at) WHERE complete = 0;
    `);
  },
};
