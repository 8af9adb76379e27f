/**
 * What both notification workers decide after one delivery attempt, and how long a claimed delivery
 * stays leased. Shared so subscriber and alert notifications retry by the same rules.
 */
import { backoffCeiling, equalJitter } from '../../shared/backoff.ts';
import type { NotifyConfig } from './config.ts';

/** Equal jitter (src/shared/backoff.ts): a delivery is never retried sooner than half its nominal delay. */
export function retryDelayMs(
  attempt: number,
  baseMs: number,
  maxMs: number,
  random: () => number = Math.random,
): number {
  return equalJitter(backoffCeiling(attempt - 1, baseMs, maxMs), random);
}

/** The lease outlives one send's timeout, so a slow but live send is never claimed twice. */
export function deliveryLeaseMs(config: Pick<NotifyConfig, 'timeoutMs'>): number {
  return config.timeoutMs * 3 + 5_000;
}

export type AfterAttempt =
  | { next: 'delivered' }
  | { next: 'failed'; reason: string }
  | { next: 'retry'; delayMs: number; error: string };

/** Delivered; failed for good (a permanent error, or the last allowed attempt); or retried after a backoff. */
export function afterAttempt(
  outcome: { ok: true } | { ok: false; permanent: boolean; error: string },
  attempts: number,
  config: Pick<NotifyConfig, 'maxAttempts' | 'backoffBaseMs' | 'backoffMaxMs'>,
  random: () => number,
): AfterAttempt {
  if (outcome.ok) return { next: 'delivered' };
  if (outcome.permanent) return { next: 'failed', reason: outcome.error };
  if (attempts >= config.maxAttempts)
    return { next: 'failed', reason: `gave up after ${attempts} attempts; last: ${outcome.error}` };
  return {
    next: 'retry',
    delayMs: retryDelayMs(attempts, config.backoffBaseMs, config.backoffMaxMs, random),
    error: outcome.error,
  };
}
