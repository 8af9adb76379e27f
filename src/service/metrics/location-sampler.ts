/**
 * Samples each private location's queue once a minute into location_metric_samples (the history of
 * GET /v1/private-locations/{id}/metrics) and drops samples older than the 15 days that endpoint
 * serves. It is leader work (leader-work.ts), so replicas do not each sample and prune; a sample is
 * keyed by location and minute anyway, so during a hand-over the first one of a minute wins.
 */
import type { LocationMetricsRepo, RunRepo } from '../store/dispatch-types.ts';
import { oldestAgeSeconds } from './service-metrics.ts';
import { RepeatingTask } from '../repeating-task.ts';
import type { Log } from '../../shared/log.ts';

export const SAMPLE_EVERY_MS = 60_000;
/** The reference serves at most 15 days back. */
export const LOCATION_METRICS_RETENTION_MS = 15 * 24 * 60 * 60_000;

export class LocationMetricsSampler extends RepeatingTask {
  readonly #runs: RunRepo;
  readonly #samples: LocationMetricsRepo;
  readonly #log: Pick<Log, 'error'>;

  constructor(opts: { runs: RunRepo; samples: LocationMetricsRepo; log: Pick<Log, 'error'> }) {
    super(SAMPLE_EVERY_MS);
    this.#runs = opts.runs;
    this.#samples = opts.samples;
    this.#log = opts.log;
  }

  protected tick(): Promise<number> {
    return this.sample();
  }

  /** Records the minute of `now` (tests pass the time); resolves to how many samples were recorded. */
  async sample(now: Date = new Date()): Promise<number> {
    try {
      const minute = Math.floor(now.getTime() / SAMPLE_EVERY_MS) * SAMPLE_EVERY_MS;
      const sampledAt = new Date(minute).toISOString();
      const stats = await this.#runs.queueStats();
      const recorded = await this.#samples.record(
        stats.map((l) => ({
          locationId: l.locationId,
          sampledAt,
          queueSize: l.queued,
          oldestQueuedSeconds: Math.round(oldestAgeSeconds(l, now.getTime())),
        })),
      );
      await this.#samples.prune(new Date(now.getTime() - LOCATION_METRICS_RETENTION_MS).toISOString());
      return recorded;
    } catch (err) {
      // The next minute tries again; the history has a gap meanwhile.
      this.#log.error({ err }, 'sampling private location queues failed');
      return 0;
    }
  }
}
