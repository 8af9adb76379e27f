/**
 * Requests held in memory per key (a location's lease requests, ./waiters.ts; a check session's
 * completion requests, ./session-waiters.ts), each until it is settled: woken by its owner, its time
 * ran out, its signal aborted, or the list closed. A request settles once and then leaves the list.
 */
export type WaitOutcome = 'woken' | 'timeout' | 'aborted' | 'stopped';

/** `data`: what the owner needs to decide whether to wake the request. */
export interface HeldRequest<T> {
  readonly data: T;
  settle(outcome: WaitOutcome): void;
}

export class HeldRequests<T> {
  readonly #held = new Map<string, Set<HeldRequest<T>>>();
  #closed = false;

  get closed(): boolean {
    return this.#closed;
  }

  /** Number of held requests (all keys). */
  get size(): number {
    let n = 0;
    for (const set of this.#held.values()) n += set.size;
    return n;
  }

  /** The requests held under `key` (a copy: settling one takes it out of the list). */
  at(key: string): HeldRequest<T>[] {
    return [...(this.#held.get(key) ?? [])];
  }

  /** Holds a request under `key` until it is settled, `ms` passed or `signal` aborted. */
  hold(key: string, data: T, ms: number, signal?: AbortSignal): Promise<WaitOutcome> {
    if (this.#closed) return Promise.resolve('stopped');
    if (signal?.aborted) return Promise.resolve('aborted');
    return new Promise<WaitOutcome>((resolve) => {
      let set = this.#held.get(key);
      if (!set) {
        set = new Set();
        this.#held.set(key, set);
      }
      const onAbort = (): void => request.settle('aborted');
      const timer = setTimeout(() => request.settle('timeout'), ms);
      const request: HeldRequest<T> = {
        data,
        settle: (outcome) => {
          clearTimeout(timer);
          signal?.removeEventListener('abort', onAbort);
          const current = this.#held.get(key);
          if (current?.delete(request) && current.size === 0) this.#held.delete(key);
          resolve(outcome);
        },
      };
      set.add(request);
      signal?.addEventListener('abort', onAbort, { once: true });
    });
  }

  /** Settles every held request, whatever its key. */
  settleAll(outcome: WaitOutcome): void {
    for (const set of [...this.#held.values()]) for (const request of [...set]) request.settle(outcome);
  }

  /** Answers every held request 'stopped' and refuses new ones. */
  close(): void {
    this.#closed = true;
    this.settleAll('stopped');
  }

  /** Accepts requests again after close. */
  reopen(): void {
    this.#closed = false;
  }
}
