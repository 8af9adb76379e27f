/**
 * Jittered exponential backoff, "full jitter" (AWS architecture blog): a uniformly random delay in
 * [0, min(cap, base * 2^attempt)]. Full jitter spreads a fleet of agents that lost the service at
 * the same moment, so they do not all come back in lock-step when it recovers.
 *
 * The cap depends on why the last call failed (docs/protocol.md "Retries"):
 *  - no answer at all (refused, reset, DNS, timeout): the service is away, and asking costs it
 *    nothing, so the cap is short (`unreachableCapMs`) and the agent is back within seconds of it;
 *  - an answer with Retry-After (429, 503): the service asked for that wait; it is honoured (up to
 *    `capMs`) plus full jitter over the short cap, so a fleet told the same wait still spreads out;
 *  - any other answer (5xx, a proxy's page): the service is there but unwell; the long `capMs`.
 */
import { backoffCeiling, fullJitter } from '../shared/backoff.ts';

export interface BackoffOptions {
  baseMs: number;
  /** Cap when the service answered. */
  capMs: number;
  /** Cap when the service could not be reached at all; defaults to `capMs`. */
  unreachableCapMs?: number;
  /** Injected in tests; returns a number in [0, 1). */
  random?: () => number;
}

/** The agent's timing for calls to the service (register, lease, results). */
export const SERVICE_BACKOFF: BackoffOptions = { baseMs: 1_000, capMs: 60_000, unreachableCapMs: 5_000 };

/** The timing for delivering what runs produced (results, artifacts): sooner, with a shorter cap. */
export const DELIVERY_BACKOFF: BackoffOptions = {
  baseMs: 500,
  capMs: 30_000,
  unreachableCapMs: SERVICE_BACKOFF.unreachableCapMs,
};

/** What the retry timing needs to know about a failed call. */
export type RetryHint = { unreachable: true } | { unreachable: false; retryAfterMs?: number };

export function backoffDelay(attempt: number, { baseMs, capMs, random = Math.random }: BackoffOptions): number {
  return fullJitter(backoffCeiling(attempt, baseMs, capMs), random);
}

/** The delay before the next try after `attempt` failures, the last of them described by `hint`. */
export function retryDelay(attempt: number, hint: RetryHint, options: BackoffOptions): number {
  const shortCap = options.unreachableCapMs ?? options.capMs;
  if (hint.unreachable) return backoffDelay(attempt, { ...options, capMs: shortCap });
  if (hint.retryAfterMs !== undefined) {
    const spread = fullJitter(shortCap, options.random);
    return Math.min(Math.max(0, hint.retryAfterMs), options.capMs) + spread;
  }
  return backoffDelay(attempt, options);
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

  /** Without a hint the failure counts as an answer of the service (the long cap). */
  next(hint: RetryHint = { unreachable: false }): number {
    const delay = retryDelay(this.#attempt, hint, this.#options);
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
    const timer = setTimeout(
      () => {
        signal?.removeEventListener('abort', onAbort);
        resolve(true);
      },
      Math.max(0, ms),
    );
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}
