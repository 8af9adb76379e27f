/**
 * Exponential backoff with jitter, for every retry loop of the agent and the service (AWS
 * architecture blog, "Exponential Backoff And Jitter"). The ceiling doubles per attempt up to a cap;
 * the jitter decides where under it the delay falls:
 *  - full jitter, anywhere in [0, ceiling): spreads a fleet that failed at the same moment the most
 *    (agents coming back to a recovered service, transactions that collided);
 *  - equal jitter, in [ceiling/2, ceiling]: spreads retries but never comes sooner than half the
 *    nominal delay (alert deliveries to a receiver that is down).
 */

/** min(capMs, baseMs * 2^attempt); the exponent is clamped so the number stays finite. */
export function backoffCeiling(attempt: number, baseMs: number, capMs: number): number {
  return Math.min(capMs, baseMs * 2 ** Math.min(Math.max(0, attempt), 52));
}

/** A uniformly random whole delay in [0, ceiling). */
export function fullJitter(ceiling: number, random: () => number = Math.random): number {
  return Math.floor(random() * ceiling);
}

/** Half the ceiling plus a random share of the other half, rounded. */
export function equalJitter(ceiling: number, random: () => number = Math.random): number {
  return Math.round(ceiling / 2 + random() * (ceiling / 2));
}
