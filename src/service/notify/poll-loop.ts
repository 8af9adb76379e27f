/**
 * The loop both notification workers run (the subscriber outbox, notify/outbox-worker.ts, and alert
 * deliveries, notify/alert-delivery.ts; the alert fan-out too): claim due work, handle each item
 * concurrently, look again when poked (new work was committed) or when the earliest due item or the
 * poll interval comes, whichever is sooner.
 *
 * Claims are not made in rounds that wait for their slowest item: up to `maxInFlight` items are in
 * hand at once and a slot is claimed again as soon as one frees, so one stuck receiver holds one slot
 * (for at most its send timeout), never the others.
 */
import { EventEmitter } from 'node:events';
import type { Log } from '../../shared/log.ts';

export interface PollLoopOptions<T> {
  /** Names the loop in logs. */
  name: string;
  /** Takes up to `limit` due items (leasing them, where a crash must make them due again). */
  claim(limit: number): Promise<T[]>;
  /** Handles one claimed item, recording its outcome; a rejection is logged and waits for the next poll. */
  handle(item: T): Promise<void>;
  /** When the earliest item not yet due will be (ISO), or null; absent: only the poll interval. */
  nextDueAt?(): Promise<string | null>;
  pollMs: number;
  maxInFlight: number;
  log: Pick<Log, 'error'>;
}

export class PollLoop<T> {
  readonly #opts: PollLoopOptions<T>;
  readonly #inFlight = new Set<Promise<void>>();
  #timer: NodeJS.Timeout | null = null;
  #claiming: Promise<void> | null = null;
  #again = false;
  /** The last claim took all the room there was: more may be due as soon as a slot frees. */
  #saturated = false;
  #started = false;
  #stopped = false;

  constructor(opts: PollLoopOptions<T>) {
    this.#opts = opts;
  }

  /** Starts working, including whatever a previous process left due; again after stop() (leadership regained). */
  start(): void {
    if (this.#started && !this.#stopped) return;
    this.#started = true;
    this.#stopped = false;
    this.poke();
  }

  /** New work was committed: look now rather than at the next poll. */
  poke(): void {
    if (!this.#started || this.#stopped) return;
    if (this.#claiming) {
      this.#again = true;
      return;
    }
    this.#clearTimer();
    this.#claiming = this.#fill().finally(() => {
      this.#claiming = null;
      if (!this.#stopped) void this.#scheduleNext();
    });
  }

  /** Stops claiming and waits for the items in hand to be recorded; the rest stays due in the store. */
  async stop(): Promise<void> {
    this.#stopped = true;
    this.#clearTimer();
    await this.#claiming;
    await Promise.all(this.#inFlight);
  }

  async #fill(): Promise<void> {
    do {
      this.#again = false;
      const room = this.#opts.maxInFlight - this.#inFlight.size;
      if (room <= 0) {
        this.#saturated = true;
        return;
      }
      let claimed: T[];
      try {
        claimed = await this.#opts.claim(room);
      } catch (err) {
        this.#opts.log.error({ err }, `${this.#opts.name}: claiming work failed; retrying at the next poll`);
        return;
      }
      for (const item of claimed) this.#track(item);
      this.#saturated = claimed.length === room;
    } while (this.#again && !this.#stopped);
  }

  #track(item: T): void {
    const done = this.#opts.handle(item).then(
      () => {
        this.#inFlight.delete(done);
        // More may be waiting for this slot; otherwise the item's outcome (a retry) may be due sooner than the timer.
        if (this.#saturated) this.poke();
        else if (!this.#claiming && !this.#stopped) void this.#scheduleNext();
      },
      (err: unknown) => {
        // Not poked again: an item that keeps failing must not spin; the next poll retries it.
        this.#inFlight.delete(done);
        this.#opts.log.error({ err }, `${this.#opts.name}: handling an item failed`);
      },
    );
    this.#inFlight.add(done);
  }

  /** Sleeps until the earliest item is due, or the poll interval, whichever is sooner. */
  async #scheduleNext(): Promise<void> {
    let due: string | null = null;
    try {
      due = (await this.#opts.nextDueAt?.()) ?? null;
    } catch (err) {
      this.#opts.log.error({ err }, `${this.#opts.name}: reading the next due time failed`);
    }
    if (this.#stopped || this.#claiming) return;
    // With every slot taken, a freed slot pokes; waking for a due item would only find no room.
    const full = this.#inFlight.size >= this.#opts.maxInFlight;
    const untilDue = due === null || full ? Number.POSITIVE_INFINITY : Math.max(0, Date.parse(due) - Date.now());
    this.#clearTimer();
    this.#timer = setTimeout(() => this.poke(), Math.min(untilDue, this.#opts.pollMs));
    // The poll alone must not keep a process alive that is otherwise done.
    this.#timer.unref();
  }

  #clearTimer(): void {
    if (this.#timer) clearTimeout(this.#timer);
    this.#timer = null;
  }
}

/**
 * A worker driven by a PollLoop: start, poke and stop as the loop's, `handle` its own; events as
 * the subclass declares them (for tests and metrics).
 */
export abstract class PollingWorker<
  T,
  Events extends Record<keyof Events, unknown[]> = Record<never, never>,
> extends EventEmitter<Events> {
  readonly #loop: PollLoop<T>;

  constructor(loop: Omit<PollLoopOptions<T>, 'handle'>) {
    super();
    this.#loop = new PollLoop({ ...loop, handle: (item) => this.handle(item) });
  }

  protected abstract handle(item: T): Promise<void>;

  /** Starts working, including whatever a previous process left due. */
  start(): void {
    this.#loop.start();
  }

  /** New work was committed: look now rather than at the next poll. */
  poke(): void {
    this.#loop.poke();
  }

  /** Stops claiming and waits for the items in hand to be recorded; the rest stays due in the store. */
  async stop(): Promise<void> {
    await this.#loop.stop();
  }
}
