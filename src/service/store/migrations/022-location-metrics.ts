/**
 * The history behind GET /v1/private-locations/{id}/metrics: one sample per location and minute of
 * its queue size and the age of its oldest queued run, kept 15 days (the reference's window).
 * The primary key makes the minute's first sample win, so replicas that all sample store it once.
 */
import type { Migration, MigrationDb } from './index.ts';

export const migration022: Migration = {
  version: 22,
  name: 'location-metrics',
  async up(db: MigrationDb) {
    await db.ddl(`
      CREATE TABLE location_metric_samples (
        location_id            TEXT NOT NULL REFERENCES private_locations(id) ON DELETE CASCADE,
        sampled_at             TEXT NOT NULL,
        queue_size             INTEGER NOT NULL,
        oldest_queued_seconds  INTEGER NOT NULL,
        PRIMARY KEY (location_id, sampled_at)
      ) STRICT, WITHOUT ROWID;
      -- Retention: samples older than 15 days, across locations.
      CREATE INDEX location_metric_samples_sampled_at ON location_metric_samples (sampled_at);
    `);
  },
};
