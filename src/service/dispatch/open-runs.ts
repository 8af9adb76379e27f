/**
 * Runs a trigger started and still waits on, each with what the trigger keeps for it. A run that
 * ends with a result is taken by the result path (`take`); one that expires or is cancelled sends
 * none, so while any is open the store is polled and an ended run is handed to `onEnded`.
 */
import type { Store } from '../store/store.ts';
import type { DispatchLog } from './dispatcher.ts';

const ENDED = new Set(['completed', 'expired', 'cancelled']);

export interface OpenRunsOptions {
  store: Store;
  log: DispatchLog;
  /** How often open runs are checked for having ended without a result. */
  pollMs: number;
  /** Called for a run found ended by the poll (a run taken by `take` is not). */
  onEnded: (runId: string) => void;
}

export class OpenRuns<T> {
  readonly #open = new Map<string, T>();
  readonly #opts: OpenRunsOptions;
  #timer: NodeJS.Timeout | undefined;
  #stopped = false;

  constructor(opts: OpenRunsOptions) {
    this.#opts = opts;
  }

  get stopped(): boolean {
    return this.#stopped;
  }

  add(runId: string, value: T): void {
    this.#open.set(runId, value);
    this.#watch();
  }

  has(runId: string): boolean {
    return this.#open.has(runId);
  }

  /** Forgets the run and answers what was kept for it (undefined when it was not open). */
  take(runId: string): T | undefined {
    const value = this.#open.get(runId);
    this.#open.delete(runId);
    return value;
  }

  stop(): void {
    this.#stopped = true;
    if (this.#timer) clearInterval(this.#timer);
    this.#timer = undefined;
  }

  #watch(): void {
    if (this.#open.size === 0 || this.#timer || this.#stopped) return;
    this.#timer = setInterval(
      () => void this.#poll().catch((err: unknown) => this.#opts.log.error({ err }, 'trigger poll failed')),
      this.#opts.pollMs,
    );
    this.#timer.unref();
  }

  async #poll(): Promise<void> {
    for (const runId of [...this.#open.keys()]) {
      const run = await this.#opts.store.runs.get(runId);
      if (!run || ENDED.has(run.state)) this.#opts.onEnded(runId);
    }
    if (this.#open.size === 0 && this.#timer) {
      clearInterval(this.#timer);
      this.#timer = undefined;
    }
  }
}
