/**
 * Where each (check, location) pair's schedule stands, for a scheduler that starts: the due time of
 * the newest slot the scheduler enqueued. It replaces runs_by_pair, an index over every run kept for a
 * day that only that start read: each enqueued run wrote one of its leaves, at random, and those page
 * writes made an enqueue's COMMIT four times as costly (BENCHMARKS.md "Schedule cursors").
 * The scheduler saves cursors in bulk every 30 s; the runs enqueued since are found at a start
 * through the queue's own indexes (src/service/dispatch/schedule-cursors.ts says how).
 */
import type { Migration, MigrationDb } from './index.ts';

export const migration034: Migration = {
  version: 34,
  name: 'schedule-cursors',
  async up(db: MigrationDb) {
    await db.ddl(`
      CREATE TABLE schedule_cursors (
        check_id     TEXT NOT NULL REFERENCES checks(id) ON DELETE CASCADE,
        location_id  TEXT NOT NULL REFERENCES private_locations(id) ON DELETE CASCADE,
        last_due_at  TEXT NOT NULL,
        PRIMARY KEY (check_id, location_id)
      ) STRICT, WITHOUT ROWID;
      CREATE INDEX schedule_cursors_by_location ON schedule_cursors (location_id);
    `);
    // Each pair's newest run so far, which is what runs_by_pair answered.
    await db.run(`
      INSERT INTO schedule_cursors (check_id, location_id, last_due_at)
      SELECT r.check_id, r.location_id, MAX(r.due_at) FROM runs r
      WHERE EXISTS (SELECT 1 FROM checks c WHERE c.id = r.check_id)
        AND EXISTS (SELECT 1 FROM private_locations l WHERE l.id = r.location_id)
      GROUP BY r.check_id, r.location_id`);
    await db.ddl('DROP INDEX runs_by_pair');
  },
};
