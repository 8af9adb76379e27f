/**
 * The heartbeat monitor: records FAILING for every heartbeat whose deadline (last ping or start of
 * the wait, plus period, plus grace) has passed without a ping.
 *
 * Deadlines live in the store, indexed (heartbeat_states_deadline), so the monitor keeps no copy:
 * one timer points at the earliest deadline, capped at `maxSleepMs` so a heartbeat created or
 * changed meanwhile (whose deadline may be earlier) is seen within that time. Each wake-up is one
 * transaction that fails everything overdue, then one indexed MIN query to re-arm. Nothing scans
 * all heartbeats, and a restart loses nothing: deadlines missed while the service was down are
 * recorded at the first sweep, stamped with the deadline itself.
 */
import type { HeartbeatEvent, HeartbeatRepo } from '../store/heartbeat-dashboard-types.ts';
import type { Log } from '../../shared/log.ts';

export interface HeartbeatMonitorOptions {
  heartbeats: Pick<HeartbeatRepo, 'failOverdue' | 'nextDeadlineMs'>;
  log: Pick<Log, 'info' | 'error'>;
  now?: () => number;
  /** The longest the monitor sleeps between sweeps; bounds how late a new heartbeat's FAILING can be. */
  maxSleepMs?: number;
  /** Told of each FAILING recorded (alerting hooks in later; tests listen here). */
  onFailing?: (event: HeartbeatEvent) => void;
}

export const DEFAULT_MAX_SLEEP_MS = 1000;

export class HeartbeatMonitor {
  readonly #heartbeats: HeartbeatMonitorOptions['heartbeats'];
  readonly #log: Pick<Log, 'info' | 'error'>;
  readonly #now: () => number;
  readonly #maxSleepMs: number;
  readonly #onFailing: (event: HeartbeatEvent) => void;
  #timer: NodeJS.Timeout | undefined;
  #running = false;
  #sweeping: Promise<void> = Promise.resolve();

  constructor(opts: HeartbeatMonitorOptions) {
    this.#heartbeats = opts.heartbeats;
    this.#log = opts.log;
    this.#now = opts.now ?? Date.now;
    this.#maxSleepMs = opts.maxSleepMs ?? DEFAULT_MAX_SLEEP_MS;
    this.#onFailing = opts.onFailing ?? (() => {});
  }

  async start(): Promise<void> {
    if (this.#running) return;
    this.#running = true;
    await this.#tick();
  }

  /** Stops the timer and waits for a sweep in progress. */
  async stop(): Promise<void> {
    this.#running = false;
    if (this.#timer) clearTimeout(this.#timer);
    this.#timer = undefined;
    await this.#sweeping;
  }

  /** Records FAILING for everything overdue at `nowMs` (the clock by default); returns those events. */
  async sweep(nowMs: number = this.#now()): Promise<HeartbeatEvent[]> {
    const failed = await this.#heartbeats.failOverdue(nowMs);
    if (failed.length > 0)
      this.#log.info({ failing: failed.map((e) => e.checkId) }, 'heartbeats missed their deadline');
    for (const event of failed) this.#onFailing(event);
    return failed;
  }

  async #tick(): Promise<void> {
    this.#timer = undefined;
    const run = (async () => {
      try {
        await this.sweep();
      } catch (err) {
        // A failed sweep (e.g. a busy database) is retried at the next tick; it must not stop the monitor.
        this.#log.error({ err }, 'heartbeat sweep failed');
      }
      if (!this.#running) return;
      let delay = this.#maxSleepMs;
      try {
        const next = await this.#heartbeats.nextDeadlineMs();
        if (next !== null) delay = Math.min(delay, Math.max(0, next - this.#now()));
      } catch (err) {
        this.#log.error({ err }, 'heartbeat deadline lookup failed');
      }
      if (this.#running) this.#timer = setTimeout(() => void this.#tick(), delay);
    })();
    this.#sweeping = run;
    await run;
  }
}
