/**
 * How many subscribe forms one client address may send to one page in a window. Kept in memory: it
 * only has to slow a script filling the outbox with confirmations; the store's per-address resend
 * limit (SUBSCRIPTION_RESEND_MINUTES) already stops repeats to one mailbox, across processes too.
 */
export const SUBMISSIONS_PER_WINDOW = 10;
export const WINDOW_MS = 10 * 60_000;

export class SubmissionLimiter {
  readonly #windows = new Map<string, { startedAt: number; count: number }>();
  readonly #now: () => number;

  constructor(now: () => number = Date.now) {
    this.#now = now;
  }

  /** Counts one submission under `key`; resolves to the seconds to wait when it is one too many, else 0. */
  take(key: string): number {
    const now = this.#now();
    this.#forgetOld(now);
    const window = this.#windows.get(key);
    if (!window) {
      this.#windows.set(key, { startedAt: now, count: 1 });
      return 0;
    }
    if (window.count >= SUBMISSIONS_PER_WINDOW) return Math.ceil((window.startedAt + WINDOW_MS - now) / 1000);
    window.count += 1;
    return 0;
  }

  /** Map order is insertion order, so the oldest windows come first and the loop stops at the first live one. */
  #forgetOld(now: number): void {
    for (const [key, window] of this.#windows) {
      if (window.startedAt + WINDOW_MS > now) break;
      this.#windows.delete(key);
    }
  }
}
