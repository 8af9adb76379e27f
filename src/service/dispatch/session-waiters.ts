/**
 * Completion requests of check sessions, held in memory, woken when a result of one of the
 * session's runs is stored on this replica. A per-session version rules out lost wake-ups as in
 * ./waiters.ts: a request watches the session and reads the version before it reads the session, and
 * a wait that starts after the version moved returns at once. Results stored by another replica do not reach this list; the
 * caller bounds each wait with a fallback poll instead (docs/api.md "Check sessions").
 */
import { HeldRequests, type WaitOutcome } from './held-requests.ts';

export type SessionWaitOutcome = WaitOutcome;

export class SessionWaiters {
  /** Per watched session: its version and how many requests watch it. */
  readonly #watched = new Map<string, { version: number; watchers: number }>();
  readonly #held = new HeldRequests<null>();

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
    return this.#held.size;
  }

  /** A run of the session reached a verdict: wake its held requests. Unwatched sessions cost nothing. */
  notify(sessionId: string): void {
    const w = this.#watched.get(sessionId);
    if (!w) return;
    w.version += 1;
    for (const request of this.#held.at(sessionId)) request.settle('woken');
  }

  /**
   * Waits until notified, `ms` passed or `signal` aborted; the session must be watched. Returns
   * 'woken' at once when the version is no longer `seen` (a result arrived since the caller read it).
   */
  wait(sessionId: string, seen: number, ms: number, signal?: AbortSignal): Promise<SessionWaitOutcome> {
    if (this.#held.closed) return Promise.resolve('stopped');
    if (this.version(sessionId) !== seen) return Promise.resolve('woken');
    return this.#held.hold(sessionId, null, ms, signal);
  }

  /** Answers every held request (service shutdown: its clients ask again, elsewhere) and refuses new waits. */
  close(): void {
    this.#held.close();
  }

  /** Accepts waits again (a stopped dispatcher that is started again). */
  reopen(): void {
    this.#held.reopen();
  }
}
