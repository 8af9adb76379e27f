/**
 * Jittered exponential backoff, "full jitter" (AWS architecture blog): a uniformly random delay in
 * [0, min(cap, base * 2^attempt)]. Full jitter spreads a fleet of agents that lost the service at
 * the same moment, so they do not all come back in lock-step when it recovers.
 */
export interface BackoffOptions {
  baseMs: number;
  capMs: number;
  /** Injected in tests; returns a number in [0, 1). */
  random?: () => number;
}

export function backoffDelay(attempt: number, { baseMs, capMs, random = Math.random }: BackoffOptions): number {
  // 2^attempt grows past any cap quickly; clamping the exponent keeps the number finite.
  const ceiling = Math.min(capMs, baseMs * 2 ** Math.min(Math.max(0, attempt), 52));
  return Math.floor(random() * ceiling);
}

/** Stateful helper for a retry loop: next() grows the delay, reset() after a success. */
export class Backoff {
  readonly #options: BackoffOptions;
  #attempt = 0;

  constructor(options: BackoffOptions) {
    this.#options = options;
  }

  get attempt(): number {
    return this.#attempt;
  }

  next(): number {
    const delay = backoffDelay(this.#attempt, this.#options);
    this.#attempt += 1;
    return delay;
  }

  reset(): void {
    this.#attempt = 0;
  }
}

/**
 * Wait `ms`, or less when `signal` aborts. Resolves true when the full time passed and false when cut
 * short, so loops can `if (!(await sleep(d, signal))) break;` without try/catch around every wait.
 */
export function sleep(ms: number, signal?: AbortSignal): Promise<boolean> {
  if (signal?.aborted) return Promise.resolve(false);
  return new Promise((resolve) => {
    const onAbort = () => {
      clearTimeout(timer);
      resolve(false);
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve(true);
    }, Math.max(0, ms));
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}
