/**
 * Periodic leader work (metrics/location-sampler.ts, subscriptions/expiry.ts, retention/sweeper.ts,
 * dispatch/schedule-cursors.ts): one run at start, then one every `everyMs`, on a timer that does
 * not keep the process alive.
 */
export abstract class RepeatingTask {
  readonly #everyMs: number;
  #timer: NodeJS.Timeout | undefined;

  constructor(everyMs: number) {
    this.#everyMs = everyMs;
  }

  /** One run. It handles its own failures: the next run is the retry. */
  protected abstract tick(): Promise<unknown>;

  /** Starting again while started does nothing. */
  start(): void {
    if (this.#timer) return;
    void this.tick();
    this.#timer = setInterval(() => void this.tick(), this.#everyMs);
    this.#timer.unref();
  }

  stop(): void {
    clearInterval(this.#timer);
    this.#timer = undefined;
  }
}
