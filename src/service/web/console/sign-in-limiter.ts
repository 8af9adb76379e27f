/**
 * Failed sign-ins counted per client address and per account id, in fixed windows: once either has
 * failed too often, sign-in is refused for that address or account until the window ends, so a key
 * cannot be guessed at the speed of the network. In memory: a restart forgets the counts, which
 * only gives a guesser one more window.
 */
export interface SignInLimits {
  perAddress: number;
  perAccount: number;
  windowMs: number;
}

export const DEFAULT_SIGN_IN_LIMITS: SignInLimits = { perAddress: 30, perAccount: 10, windowMs: 15 * 60_000 };

/** Entries kept at most; expired windows are dropped first, then the oldest. */
const MAX_ENTRIES = 10_000;

export class SignInLimiter {
  readonly #limits: SignInLimits;
  readonly #failures = new Map<string, { count: number; resetAt: number }>();

  constructor(limits: SignInLimits = DEFAULT_SIGN_IN_LIMITS) {
    this.#limits = limits;
  }

  /** Whether a sign-in from `address` to `accountId` may be tried now. */
  allows(address: string, accountId: string, now = Date.now()): boolean {
    return (
      this.#count(`address:${address}`, now) < this.#limits.perAddress &&
      this.#count(`account:${accountId}`, now) < this.#limits.perAccount
    );
  }

  recordFailure(address: string, accountId: string, now = Date.now()): void {
    this.#bump(`address:${address}`, now);
    this.#bump(`account:${accountId}`, now);
  }

  #count(key: string, now: number): number {
    const entry = this.#failures.get(key);
    return entry && entry.resetAt > now ? entry.count : 0;
  }

  #bump(key: string, now: number): void {
    const entry = this.#failures.get(key);
    if (entry && entry.resetAt > now) entry.count += 1;
    else this.#failures.set(key, { count: 1, resetAt: now + this.#limits.windowMs });
    if (this.#failures.size > MAX_ENTRIES) this.#prune(now);
  }

  #prune(now: number): void {
    for (const [key, entry] of this.#failures) if (entry.resetAt <= now) this.#failures.delete(key);
    for (const key of this.#failures.keys()) {
      if (this.#failures.size <= MAX_ENTRIES) break;
      this.#failures.delete(key);
    }
  }
}
