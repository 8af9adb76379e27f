/** Per-minute samples of each private location's queue (migration 022), for the location metrics API. */
import type { DatabaseSync } from 'node:sqlite';
import type { LocationMetricSample, LocationMetricsRepo } from '../dispatch-types.ts';
import { inTransaction, statement } from './db.ts';

interface SampleRow {
  location_id: string;
  sampled_at: string;
  queue_size: number;
  oldest_queued_seconds: number;
}

const toSample = (row: SampleRow): LocationMetricSample => ({
  locationId: row.location_id,
  sampledAt: row.sampled_at,
  queueSize: row.queue_size,
  oldestQueuedSeconds: row.oldest_queued_seconds,
});

export class SqliteLocationMetricsRepo implements LocationMetricsRepo {
  readonly #db: DatabaseSync;

  constructor(db: DatabaseSync) {
    this.#db = db;
  }

  async record(samples: readonly LocationMetricSample[]): Promise<number> {
    // A location deleted since the queue was read has no row to reference: skipped, not an error.
    const insert = statement(
      this.#db,
      `INSERT INTO location_metric_samples (location_id, sampled_at, queue_size, oldest_queued_seconds)
       SELECT $locationId, $sampledAt, $queueSize, $oldest WHERE EXISTS (SELECT 1 FROM private_locations WHERE id = $locationId)
       ON CONFLICT (location_id, sampled_at) DO NOTHING`,
    );
    return inTransaction(this.#db, () =>
      samples.reduce(
        (n, s) =>
          n +
          Number(insert.run({ locationId: s.locationId, sampledAt: s.sampledAt, queueSize: s.queueSize, oldest: s.oldestQueuedSeconds }).changes),
        0,
      ),
    );
  }

  async list(locationId: string, from: string, to: string): Promise<LocationMetricSample[]> {
    const rows = statement(
      this.#db,
      `SELECT * FROM location_metric_samples WHERE location_id = ? AND sampled_at >= ? AND sampled_at <= ? ORDER BY sampled_at`,
    ).all(locationId, from, to) as unknown as SampleRow[];
    return rows.map(toSample);
  }

  async prune(before: string): Promise<number> {
    return Number(statement(this.#db, 'DELETE FROM location_metric_samples WHERE sampled_at < ?').run(before).changes);
  }
}
