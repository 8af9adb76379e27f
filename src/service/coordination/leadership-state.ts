/**
 * The part of a Leadership that does not depend on the backend: its callbacks, and the order in
 * which they run. Transitions are queued, so a loss that arrives while the acquire callbacks are
 * still starting work runs after them, never beside them.
 */
import type { CoordinationLog } from './log.ts';
import type { Leadership, LeadershipCallback } from './types.ts';

export class LeadershipState {
  readonly #name: string;
  readonly #log: CoordinationLog;
  readonly #onAcquire: LeadershipCallback[] = [];
  readonly #onLose: LeadershipCallback[] = [];
  #leading = false;
  #transitions: Promise<void> = Promise.resolve();

  constructor(name: string, log: CoordinationLog) {
    this.#name = name;
    this.#log = log;
  }

  get isLeader(): boolean {
    return this.#leading;
  }

  onAcquire(cb: LeadershipCallback): void {
    this.#onAcquire.push(cb);
  }

  onLose(cb: LeadershipCallback): void {
    this.#onLose.push(cb);
  }

  /**
   * Becomes leader (after any transition in progress); resolves when the acquire callbacks ran, and
   * rejects with the first failure when one failed. It leads either way, so lose() stops what did start.
   */
  acquire(): Promise<void> {
    return this.#queue(async () => {
      if (this.#leading) return;
      const failure = await this.#runAll(this.#onAcquire, 'starting leader work');
      this.#leading = true;
      if (failure) throw failure;
      this.#log.info({ leadership: this.#name }, 'this replica leads');
    });
  }

  /** Stops leading (after any transition in progress); resolves when the lose callbacks ran. */
  lose(): Promise<void> {
    return this.#queue(async () => {
      if (!this.#leading) return;
      this.#leading = false;
      await this.#runAll(this.#onLose, 'stopping leader work');
      this.#log.info({ leadership: this.#name }, 'this replica no longer leads');
    });
  }

  #queue(step: () => Promise<void>): Promise<void> {
    const run = this.#transitions.then(step);
    // A failed transition does not stop the ones queued after it.
    this.#transitions = run.catch(() => {});
    return run;
  }

  /**
   * Each callback runs even when one before it failed: a task that cannot start must not keep the
   * others from it. Returns the first failure.
   */
  async #runAll(callbacks: readonly LeadershipCallback[], what: string): Promise<unknown> {
    let failure: unknown;
    for (const cb of callbacks) {
      try {
        await cb();
      } catch (err) {
        this.#log.error({ err, leadership: this.#name }, `${what} failed`);
        failure ??= err;
      }
    }
    return failure;
  }
}

/** What every backend's Leadership shares: its name, and callbacks and state kept by a LeadershipState. */
export abstract class LeadershipBase implements Leadership {
  readonly name: string;
  protected readonly state: LeadershipState;

  constructor(name: string, log: CoordinationLog) {
    this.name = name;
    this.state = new LeadershipState(name, log);
  }

  get isLeader(): boolean {
    return this.state.isLeader;
  }

  onAcquire(cb: LeadershipCallback): void {
    this.state.onAcquire(cb);
  }

  onLose(cb: LeadershipCallback): void {
    this.state.onLose(cb);
  }

  abstract start(): Promise<void>;
  abstract close(): Promise<void>;
}
