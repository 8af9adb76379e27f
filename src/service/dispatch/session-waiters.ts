/**
 * Completion requests of check sessions, held in memory, woken when a result of one of the
 * session's runs is stored on this replica. A per-session version rules out lost wake-ups as in
 * ./waiters.ts: a request watches the session and reads the version before it reads the session, and
 * a wait that starts after the version moved returns at once. Results stored by another replica do not reach this list; the
 * caller bounds each wait with a fallback poll instead (docs/api.md "Check sessions").
 */
export type SessionWaitOutcome = 'woken' | 'timeout' | 'aborted' | 'stopped';

export class SessionWaiters {
  /** Per watched session: its version and how many requests watch it. */
  readonly #watched = new Map<string, { version: number; watchers: number }>();
  readonly #waiters = new Map<string, Set<(outcome: SessionWaitOutcome) => void>>();
  #closed = false;

  /** Starts watching a session (pair with `unwatch`): from now on its results move its version. */
  watch(sessionId: string): void {
    const w = this.#watched.get(sessionId);
    if (w) w.watchers += 1;
    else this.#watched.set(sessionId, { version: 0, watchers: 1 });
  }

  unwatch(sessionId: string): void {
    const w = this.#watched.get(sessionId);
    if (w && --w.watchers === 0) this.#watched.delete(sessionId);
  }

  version(sessionId: string): number {
    return this.#watched.get(sessionId)?.version ?? 0;
  }

  /** Number of held requests, for tests and diagnostics. */
  get size(): number {
    let n = 0;
    for (const set of this.#waiters.values()) n += set.size;
    return n;
  }

  /** A run of the session reached a verdict: wake its held requests. Unwatched sessions cost nothing. */
  notify(sessionId: string): void {
    const w = this.#watched.get(sessionId);
    if (!w) return;
    w.version += 1;
    for (const settle of [...(this.#waiters.get(sessionId) ?? [])]) settle('woken');
  }

  /**
   * Waits until notified, `ms` passed or `signal` aborted; the session must be watched. Returns
   * 'woken' at once when the version is no longer `seen` (a result arrived since the caller read it).
   */
  wait(sessionId: string, seen: number, ms: number, signal?: AbortSignal): Promise<SessionWaitOutcome> {
    if (this.#closed) return Promise.resolve('stopped');
    if (this.version(sessionId) !== seen) return Promise.resolve('woken');
    if (signal?.aborted) return Promise.resolve('aborted');
    return new Promise((resolve) => {
      let set = this.#waiters.get(sessionId);
      if (!set) {
        set = new Set();
        this.#waiters.set(sessionId, set);
      }
      const onAbort = (): void => settle('aborted');
      const timer = setTimeout(() => settle('timeout'), ms);
      const settle = (outcome: SessionWaitOutcome): void => {
        clearTimeout(timer);
        signal?.removeEventListener('abort', onAbort);
        const current = this.#waiters.get(sessionId);
        if (current?.delete(settle) && current.size === 0) this.#waiters.delete(sessionId);
        resolve(outcome);
      };
      set.add(settle);
      signal?.addEventListener('abort', onAbort, { once: true });
    });
  }

  /** Answers every held request (service shutdown: its clients ask again, elsewhere) and refuses new waits. */
  close(): void {
    this.#closed = true;
    for (const set of [...this.#waiters.values()]) for (const settle of [...set]) settle('stopped');
  }

  /** Accepts waits again (a stopped dispatcher that is started again). */
  reopen(): void {
    this.#closed = false;
  }
}
