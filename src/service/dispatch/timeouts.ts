/** Time limits of a run: how late it may start, and how long the agent lets it run. */
import type { CheckType } from '../../shared/checks/types.ts';
import type { StoredCheck } from '../store/store.ts';
import { intervalMsOf } from './scheduler.ts';

/** Wall-clock limits the agent enforces per run, by check type (the reference's limits). */
export const RUN_TIMEOUT_MS: Readonly<Record<CheckType, number>> = {
  API: 30_000,
  TCP: 30_000,
  DNS: 30_000,
  ICMP: 30_000,
  BROWSER: 240_000,
  MULTI_STEP: 240_000,
  PLAYWRIGHT: 3_600_000,
  URL: 30_000,
  SSL: 30_000,
};

/**
 * The share of its interval a run may wait for an agent before it is shed rather than started. A run
 * that starts more than half an interval late is nearer its successor's slot than its own: running it
 * spends the capacity the on-time runs need (docs/protocol.md "Overload").
 */
export const START_DEADLINE_SHARE = 0.5;

/**
 * The latest time a run may start: half the check's interval after `fromMs` (its due time, or its
 * enqueue when that was later), at most the queue TTL.
 */
export function startByOf(
  check: Pick<StoredCheck, 'frequency' | 'frequencyOffset'>,
  fromMs: number,
  queueTtlSeconds: number,
): number {
  return fromMs + Math.min(intervalMsOf(check) * START_DEADLINE_SHARE, queueTtlSeconds * 1000);
}
