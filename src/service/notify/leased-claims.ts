/**
 * How both notification workers (outbox-worker.ts, alert-delivery.ts) claim from their queue in the
 * store: due rows, each leased for deliveryLeaseMs, and a look at the earliest one not yet due.
 */
import { deliveryLeaseMs } from './attempts.ts';
import type { NotifyConfig } from './config.ts';
import type { PollLoopOptions } from './poll-loop.ts';

export interface LeasedQueue<T> {
  claimDue(now: Date, limit: number, leaseMs: number): Promise<T[]>;
  nextDueAt(): Promise<string | null>;
}

/** The claim and poll settings of a PollingWorker over `queue`. */
export function leasedClaims<T>(
  queue: LeasedQueue<T>,
  config: NotifyConfig,
): Pick<PollLoopOptions<T>, 'claim' | 'nextDueAt' | 'pollMs'> {
  return {
    claim: (limit) => queue.claimDue(new Date(), limit, deliveryLeaseMs(config)),
    nextDueAt: () => queue.nextDueAt(),
    pollMs: config.pollMs,
  };
}
