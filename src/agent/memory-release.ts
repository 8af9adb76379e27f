/**
 * Gives back the memory a burst of checks took, once the agent is quiet again.
 *
 * V8 keeps the pages its heap grew into after the objects on them died, and Node runs none of the
 * idle-time collections a browser does, so an agent that ran a burst would stay near its peak RSS.
 * The last-resort collection of the `gc()` that `--expose-gc` provides (bin/agent-node-flags) is
 * V8's low-memory one: it compacts the heap and also returns the freed pages V8 would keep pooled
 * (a plain `gc()` shrinks the heap but not the RSS). It runs once per burst, after no run has
 * finished for `quietMs`, so it never pauses checks that are running. Without the flag it does
 * nothing. User code never runs in this process (it runs in sandboxes), so exposing `gc` gives
 * nothing to a check.
 */

/** V8's low-memory collection, when the process was started with --expose-gc. */
function lowMemoryCollection(): (() => void) | undefined {
  const { gc } = globalThis;
  return gc ? () => void gc({ type: 'major', execution: 'sync', flavor: 'last-resort' }) : undefined;
}

export interface IdleMemoryReleaseOptions {
  /** How long without a finished run counts as quiet. */
  quietMs?: number;
  /** Runs finished since the last release that make a burst worth a collection. */
  minRuns?: number;
  /** The collection; V8's low-memory one (present with --expose-gc) by default. */
  gc?: (() => void) | undefined;
  now?: () => number;
  /** Called after each release, for the log. */
  released?: (runs: number, ms: number) => void;
}

export class IdleMemoryRelease {
  readonly #quietMs: number;
  readonly #minRuns: number;
  readonly #gc: (() => void) | undefined;
  readonly #now: () => number;
  readonly #released: (runs: number, ms: number) => void;
  readonly #timer: NodeJS.Timeout | undefined;
  #runs = 0;
  #lastFinishedAt = 0;

  constructor(opts: IdleMemoryReleaseOptions = {}) {
    this.#quietMs = opts.quietMs ?? 10_000;
    this.#minRuns = opts.minRuns ?? 500;
    this.#gc = 'gc' in opts ? opts.gc : lowMemoryCollection();
    this.#now = opts.now ?? Date.now;
    this.#released = opts.released ?? (() => {});
    if (!this.#gc) return;
    this.#timer = setInterval(() => this.#releaseIfQuiet(), this.#quietMs / 2);
    this.#timer.unref();
  }

  /** Whether a collection can run at all (the process was started with --expose-gc). */
  get enabled(): boolean {
    return this.#gc !== undefined;
  }

  runFinished(): void {
    this.#runs += 1;
    this.#lastFinishedAt = this.#now();
  }

  stop(): void {
    clearInterval(this.#timer);
  }

  #releaseIfQuiet(): void {
    if (this.#runs < this.#minRuns || this.#now() - this.#lastFinishedAt < this.#quietMs) return;
    const runs = this.#runs;
    this.#runs = 0;
    const started = this.#now();
    this.#gc?.();
    this.#released(runs, this.#now() - started);
  }
}
