/**
 * Held lease requests, per location, in memory. A request that found nothing to claim parks here
 * and is woken the moment a run it could take is enqueued or handed back, so no request polls the
 * database while it waits.
 *
 * Lost wake-ups are ruled out with a per-location version: a request reads it before it tries to
 * claim and waits only if nothing was announced since (checking and parking happen in one
 * synchronous step, so nothing can slip in between).
 */
import type { CheckClass, CheckType } from '../../shared/checks/types.ts';
import { HeldRequests, type WaitOutcome } from './held-requests.ts';

export type { WaitOutcome } from './held-requests.ts';

/** What a held request can take: its agent's check types and its free slots per class. */
export interface WaitFilter {
  checkTypes: ReadonlySet<CheckType>;
  slots: Record<CheckClass, number>;
}

/** Just enough of a run to tell which waiters could take it. */
export interface Announced {
  checkType: CheckType;
  checkClass: CheckClass;
}

export class WaitList {
  readonly #versions = new Map<string, number>();
  readonly #held = new HeldRequests<WaitFilter>();
  /** Bumped by wakeAll: every location's version moves with it. */
  #epoch = 0;

  version(locationId: string): number {
    return this.#epoch + (this.#versions.get(locationId) ?? 0);
  }

  get closed(): boolean {
    return this.#held.closed;
  }

  /** Number of held requests (all locations), for tests and diagnostics. */
  get size(): number {
    return this.#held.size;
  }

  /** Announces runs that became claimable at a location and wakes the requests that could take one. */
  notify(locationId: string, runs: readonly Announced[]): void {
    if (runs.length === 0) return;
    this.#versions.set(locationId, (this.#versions.get(locationId) ?? 0) + 1);
    for (const request of this.#held.at(locationId)) {
      const { checkTypes, slots } = request.data;
      if (runs.some((r) => checkTypes.has(r.checkType) && (slots[r.checkClass] ?? 0) > 0)) request.settle('woken');
    }
  }

  /**
   * Parks until woken, `ms` passed, `signal` aborted or the list closed. Call it only when
   * version(locationId) still equals the version read before the failed claim.
   */
  wait(locationId: string, filter: WaitFilter, ms: number, signal?: AbortSignal): Promise<WaitOutcome> {
    return this.#held.hold(locationId, filter, ms, signal);
  }

  /**
   * Wakes every held request, whatever it could take, and moves every version on: announcements may
   * have been missed (another replica's, while the signal connection was down), so everyone looks again.
   */
  wakeAll(): void {
    this.#epoch += 1;
    this.#held.settleAll('woken');
  }

  /** Answers every held request (service shutdown) and refuses new ones. */
  close(): void {
    this.#held.close();
  }

  /** Accepts waiters again after close (a stopped dispatcher that is started again). */
  reopen(): void {
    this.#held.reopen();
  }
}
