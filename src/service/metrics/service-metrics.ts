/**
 * The service's Prometheus metrics (GET /metrics, ./routes.ts), in a registry of its own so two
 * services in one process (tests) never share series. Naming follows Prometheus conventions:
 * `outpost_service_` prefix, base units (seconds), `_total` on counters.
 *
 * Cardinality: `location` is a private location's id and the only unbounded-looking label; it is
 * bounded by the installation's locations (the gauges list the locations that exist; a counter keeps
 * a deleted location's series until the process restarts). Routes are URL patterns, never raw URLs.
 *
 * Gauges read the database when scraped: one aggregate over the open runs and one count per outbox,
 * shared by every gauge of a scrape. Counters count what this process did, so with several replicas
 * sum() them, while the database-backed gauges are the same on every replica (use max()).
 */
import { Counter, collectDefaultMetrics, Gauge, Histogram, Registry } from 'prom-client';
import type { DispatchCounters, RunExpiryReason } from '../dispatch/dispatcher.ts';
import type { LocationQueueStats } from '../store/dispatch-types.ts';
import type { Run, Store } from '../store/store.ts';

const PREFIX = 'outpost_service_';
/** Long-polls of the agent API are held up to JOB_LEASE_MAX_WAIT_SECONDS, hence the top buckets. */
const HTTP_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60];

interface Snapshot {
  locations: LocationQueueStats[];
  outboxes: { subscriber: number; alert: number };
  atMs: number;
}

type Sample<L extends string> = [Record<L, string>, number];

export interface HttpObservation {
  /** The route's URL pattern (`/v1/checks/:id`); undefined when no route matched. */
  route: string | undefined;
  method: string;
  statusCode: number;
  seconds: number;
}

export class ServiceMetrics implements DispatchCounters {
  readonly registry = new Registry();
  readonly #store: Store;
  readonly #leaseExpiries: Counter<'location'>;
  readonly #resultsStored: Counter<'location'>;
  readonly #runsExpired: Counter<'location' | 'reason'>;
  readonly #runsSkipped: Counter<'location' | 'reason'>;
  readonly #httpDuration: Histogram<'route' | 'method' | 'status_class'>;
  #reading: Promise<Snapshot> | undefined;

  constructor(opts: { store: Store }) {
    this.#store = opts.store;
    const registers = [this.registry];
    collectDefaultMetrics({ register: this.registry, prefix: PREFIX });
    this.#leaseExpiries = new Counter({
      name: `${PREFIX}lease_expiries_total`,
      help: 'Leases that ran out without a heartbeat (the run was queued again or given up), per location.',
      labelNames: ['location'],
      registers,
    });
    this.#resultsStored = new Counter({
      name: `${PREFIX}results_stored_total`,
      help: 'Results stored (duplicates not counted), per location.',
      labelNames: ['location'],
      registers,
    });
    this.#runsExpired = new Counter({
      name: `${PREFIX}runs_expired_total`,
      help: 'Runs that expired without running, per location and reason (queue_ttl, superseded, start_deadline: shed under overload, lease_attempts).',
      labelNames: ['location', 'reason'],
      registers,
    });
    this.#runsSkipped = new Counter({
      name: `${PREFIX}runs_skipped_total`,
      help: 'Due scheduled runs never enqueued, per location and reason (overload: only the share its agents can run was admitted).',
      labelNames: ['location', 'reason'],
      registers,
    });
    this.#httpDuration = new Histogram({
      name: `${PREFIX}http_request_duration_seconds`,
      help: 'Time to answer HTTP requests, per route pattern, method and status class.',
      labelNames: ['route', 'method', 'status_class'],
      buckets: HTTP_BUCKETS,
      registers,
    });
    this.#databaseGauges();
  }

  leasesExpired(runs: readonly Run[]): void {
    for (const run of runs) this.#leaseExpiries.inc({ location: run.locationId });
  }

  resultStored(run: Run): void {
    this.#resultsStored.inc({ location: run.locationId });
  }

  runsExpired(locationId: string, reason: RunExpiryReason, count: number): void {
    this.#runsExpired.inc({ location: locationId, reason }, count);
  }

  runsSkipped(locationId: string, reason: 'overload', count: number): void {
    this.#runsSkipped.inc({ location: locationId, reason }, count);
  }

  observeHttp(o: HttpObservation): void {
    const labels = {
      route: o.route ?? 'unmatched',
      method: o.method,
      status_class: `${Math.floor(o.statusCode / 100)}xx`,
    };
    this.#httpDuration.observe(labels, o.seconds);
  }

  /** The gauges filled from the database at each scrape. */
  #databaseGauges(): void {
    const perLocation = (value: (l: LocationQueueStats, atMs: number) => number) => (s: Snapshot) =>
      s.locations.map((l): Sample<'location'> => [{ location: l.locationId }, value(l, s.atMs)]);
    this.#snapshotGauge(
      'runs',
      'Open runs per location and state (queued: waiting for an agent; leased: running on one).',
      ['location', 'state'],
      (s) =>
        s.locations.flatMap(
          (l): Array<Sample<'location' | 'state'>> => [
            [{ location: l.locationId, state: 'queued' }, l.queued],
            [{ location: l.locationId, state: 'leased' }, l.leased],
          ],
        ),
    );
    this.#snapshotGauge(
      'queue_depth',
      'Runs waiting in the location queue for an agent (what an autoscaler scales agents on).',
      ['location'],
      perLocation((l) => l.queued),
    );
    this.#snapshotGauge(
      'queue_oldest_age_seconds',
      'Age of the oldest queued run of the location since it was due; 0 when the queue is empty.',
      ['location'],
      perLocation(oldestAgeSeconds),
    );
    this.#snapshotGauge(
      'outbox_depth',
      'Notifications waiting to be sent: to status page subscribers (subscriber) and alert channels (alert).',
      ['outbox'],
      (s) => [
        [{ outbox: 'subscriber' }, s.outboxes.subscriber],
        [{ outbox: 'alert' }, s.outboxes.alert],
      ],
    );
  }

  /** A gauge whose series are set from the scrape's snapshot; series of what no longer exists go. */
  #snapshotGauge<L extends string>(
    name: string,
    help: string,
    labelNames: L[],
    values: (s: Snapshot) => Array<Sample<L>>,
  ): void {
    const snapshot = () => this.#snapshot();
    new Gauge<L>({
      name: `${PREFIX}${name}`,
      help,
      labelNames,
      registers: [this.registry],
      async collect() {
        const s = await snapshot();
        this.reset();
        for (const [labels, value] of values(s)) this.set(labels, value);
      },
    });
  }

  /** One read per scrape: every gauge's collect starts in the same tick and shares it. */
  #snapshot(): Promise<Snapshot> {
    this.#reading ??= this.#read().finally(() => {
      this.#reading = undefined;
    });
    return this.#reading;
  }

  async #read(): Promise<Snapshot> {
    const [locations, subscriber, alert] = await Promise.all([
      this.#store.runs.queueStats(),
      this.#store.outbox.pendingCount(),
      this.#store.alertNotifications.pendingCount(),
    ]);
    return { locations, outboxes: { subscriber, alert }, atMs: Date.now() };
  }
}

/** Seconds since the oldest queued run was due; 0 for an empty queue or a run not yet due. */
export function oldestAgeSeconds(stats: LocationQueueStats, nowMs: number): number {
  if (stats.oldestQueuedDueAt === null) return 0;
  return Math.max(0, (nowMs - Date.parse(stats.oldestQueuedDueAt)) / 1000);
}
