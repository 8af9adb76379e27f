/**
 * How many uptime runs the agent may lease beyond its uptime slots, to start as slots free. With a
 * backlog at the service every leased run starts at once and holds its slot, so the slots free in
 * batches; without runs in hand, a freed slot idles for a whole lease round trip (docs/protocol.md
 * "Runs in hand"). A run in hand waits for a slot instead: with every slot busy one frees every
 * meanRun / slots, so the last of `extra` runs in hand waits about extra × meanRun / slots. The
 * extra is sized so that wait stays under `waitBoundMs`, and never exceeds half the slots: short
 * runs get runs in hand, runs of seconds (a slow target, a timeout) next to none, so a run is not
 * held back from another agent that could start it.
 */

/** Weight of the newest run in the mean: about the last 20 runs count. */
const WEIGHT = 0.05;

export class UptimePrefetch {
  readonly #slots: number;
  readonly #waitBoundMs: number;
  #meanRunMs: number | undefined;

  constructor(slots: number, waitBoundMs = 100) {
    this.#slots = slots;
    this.#waitBoundMs = waitBoundMs;
  }

  /** Counts one finished uptime run's wall time into the mean. */
  ran(ms: number): void {
    this.#meanRunMs = this.#meanRunMs === undefined ? ms : this.#meanRunMs + WEIGHT * (ms - this.#meanRunMs);
  }

  /** Runs to lease beyond the slots: none before a run has finished. */
  get extra(): number {
    if (this.#meanRunMs === undefined) return 0;
    const byWait = (this.#waitBoundMs * this.#slots) / Math.max(this.#meanRunMs, 1);
    return Math.floor(Math.min(this.#slots / 2, byWait));
  }
}
