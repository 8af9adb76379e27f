/** Per-minute samples of each private location's queue (migration 022), for the location metrics API. */
import type { SqlDatabase } from '../sql/database.ts';
import type { LocationMetricSample, LocationMetricsRepo } from '../dispatch-types.ts';

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

// A location deleted since the queue was read has no row to reference: skipped, not an error. The
// values are cast because PostgreSQL gives untyped parameters of a SELECT list no column type.
const RECORD = `
  INSERT INTO location_metric_samples (location_id, sampled_at, queue_size, oldest_queued_seconds)
  SELECT CAST($locationId AS TEXT), CAST($sampledAt AS TEXT), CAST($queueSize AS INTEGER), CAST($oldest AS INTEGER)
  WHERE EXISTS (SELECT 1 FROM private_locations WHERE id = $locationId)
  ON CONFLICT (location_id, sampled_at) DO NOTHING`;

export class SqlLocationMetricsRepo implements LocationMetricsRepo {
  readonly #db: SqlDatabase;

  constructor(db: SqlDatabase) {
    this.#db = db;
  }

  async record(samples: readonly LocationMetricSample[]): Promise<number> {
    return this.#db.transaction(async () => {
      let recorded = 0;
      for (const s of samples) {
        const params = {
          locationId: s.locationId,
          sampledAt: s.sampledAt,
          queueSize: s.queueSize,
          oldest: s.oldestQueuedSeconds,
        };
        recorded += (await this.#db.run(RECORD, params)).changes;
      }
      return recorded;
    });
  }

  async list(locationId: string, from: string, to: string): Promise<LocationMetricSample[]> {
    const rows = await this.#db.all<SampleRow>(
      'SELECT * FROM location_metric_samples WHERE location_id = ? AND sampled_at >= ? AND sampled_at <= ? ORDER BY sampled_at',
      [locationId, from, to],
    );
    return rows.map(toSample);
  }

  async prune(before: string): Promise<number> {
    return (await this.#db.run('DELETE FROM location_metric_samples WHERE sampled_at < ?', [before])).changes;
  }
}
