/**
 * Admission under overload (docs/protocol.md "Overload"): while a location sheds, the leader enqueues
 * only the share of its due scheduled runs that its agents can run, plus a margin, instead of storing
 * every run only to shed most of it half an interval later: time the service could have spent
 * storing results (BENCHMARKS.md "Overload admission").
 *
 * Per location and check class (uptime or heavy: agents have separate slots for each), the share is
 * what was delivered (runs completed, at any replica, read from the store) over what the leader
 * offered (due runs, admitted or not) in the last ADMISSION_WINDOW_MS, times ADMISSION_MARGIN. Both
 * are rates measured now, so the share follows a change in load within a window, without waiting
 * for sheds half an interval later. Each check at the location keeps its share of its slots, spread
 * evenly: a per-check credit, so no check goes dark while others run.
 */

import { type CheckClass, type CheckType, checkClassOf } from '../../shared/checks/types.ts';
import type { LocationRunOutcome } from '../store/dispatch-types.ts';

export interface AdmissionOptions {
  /** Each location's outcomes of runs finished since the time given (store.runs.outcomesSince). */
  outcomesSince: (sinceIso: string) => Promise<LocationRunOutcome[]>;
  now: () => number;
  /** Whether this replica shed runs lately (the dispatcher's overload hold): the outcomes are then read every second. */
  shedHereLately: () => boolean;
  /** Spreads the checks' first admitted slot (tests pass a fixed one). */
  random?: () => number;
}

/** A due run as admission sees it: which check, at which location. */
export interface Admissible {
  check: { id: string; checkType: CheckType | 'HEARTBEAT' };
  locationId: string;
}

/** Admission is decided per location and check class: the key of one. */
const keyOf = (locationId: string, checkClass: CheckClass) => `${checkClass} ${locationId}`;

/** How far back delivered and offered runs are counted: a few seconds of claims, unaffected by one slow batch. */
export const ADMISSION_WINDOW_MS = 2_000;
/**
 * Admitted beyond what was delivered: the agents never wait for work, and a little is still shed,
 * which keeps the location counted as overloaded and its capacity measured.
 */
export const ADMISSION_MARGIN = 1.15;
/**
 * Below this many due runs offered in the window a location is never limited: its sheds cost little,
 * and a few seconds of a slow location's completions say nothing about its rate.
 */
export const ADMISSION_MIN_OFFERED = 100;
/** The least share admitted: a location whose agents completed nothing in the window still gets runs to start. */
export const ADMISSION_MIN_SHARE = 0.1;
/** How often the outcomes are read while this replica sheds somewhere. */
const REFRESH_MS = 1_000;
/** How often they are read otherwise: another replica may be the one shedding. */
const IDLE_REFRESH_MS = 10_000;

export class OverloadAdmission {
  readonly #outcomesSince: AdmissionOptions['outcomesSince'];
  readonly #now: () => number;
  readonly #shedHereLately: () => boolean;
  readonly #random: () => number;
  /**
   * Location and class (keyOf) admitting less than every run: their share, in (0, 1), and each
   * check's credit towards its next admitted slot.
   */
  readonly #limits = new Map<string, { share: number; credits: Map<string, number> }>();
  /** Due runs offered per location and class, in the order offered, for the window. */
  readonly #offered: Array<{ atMs: number; key: string; count: number }> = [];
  /** keyOf per location and class, made once: the scheduler offers thousands of runs a second. */
  readonly #keys = new Map<string, Record<CheckClass, string>>();
  #refreshedAt = Number.NEGATIVE_INFINITY;

  constructor(opts: AdmissionOptions) {
    this.#outcomesSince = opts.outcomesSince;
    this.#now = opts.now;
    this.#shedHereLately = opts.shedHereLately;
    this.#random = opts.random ?? Math.random;
  }

  /** The share of a location's due runs of a class admitted now (1 when it is not limited). */
  shareOf(locationId: string, checkClass: CheckClass): number {
    return this.#limits.get(keyOf(locationId, checkClass))?.share ?? 1;
  }

  /** Splits a scheduler batch into the runs to enqueue and, per location, how many were not admitted. */
  async select<T extends Admissible>(
    due: readonly T[],
  ): Promise<{ admitted: readonly T[]; skipped: Map<string, number> }> {
    const keys = due.map((run) => this.#keyOfRun(run));
    this.#recordOffered(keys);
    await this.#refreshIfDue();
    const skipped = new Map<string, number>();
    if (this.#limits.size === 0) return { admitted: due, skipped };
    const admitted = due.filter((run, i) => {
      if (this.#admits(run.check.id, keys[i])) return true;
      skipped.set(run.locationId, (skipped.get(run.locationId) ?? 0) + 1);
      return false;
    });
    return { admitted, skipped };
  }

  /** The key of a due run; none for a heartbeat (never scheduled: listSchedulable omits them). */
  #keyOfRun(run: Admissible): string | undefined {
    if (run.check.checkType === 'HEARTBEAT') return undefined;
    let keys = this.#keys.get(run.locationId);
    if (!keys) {
      keys = { uptime: keyOf(run.locationId, 'uptime'), heavy: keyOf(run.locationId, 'heavy') };
      this.#keys.set(run.locationId, keys);
    }
    return keys[checkClassOf(run.check.checkType)];
  }

  /** Whether the check's slot is admitted: its credit grows by the share and pays 1 for each admitted slot. */
  #admits(checkId: string, key: string | undefined): boolean {
    // A heartbeat is left for the enqueue to refuse.
    const limit = key === undefined ? undefined : this.#limits.get(key);
    if (!limit) return true;
    const { share, credits } = limit;
    const credit = (credits.get(checkId) ?? this.#random()) + share;
    credits.set(checkId, credit >= 1 ? credit - 1 : credit);
    return credit >= 1;
  }

  #recordOffered(keys: ReadonlyArray<string | undefined>): void {
    const atMs = this.#now();
    const counts = new Map<string, number>();
    for (const key of keys) if (key !== undefined) counts.set(key, (counts.get(key) ?? 0) + 1);
    for (const [key, count] of counts) this.#offered.push({ atMs, key, count });
    while (this.#offered.length > 0 && this.#offered[0]!.atMs <= atMs - ADMISSION_WINDOW_MS) this.#offered.shift();
  }

  async #refreshIfDue(): Promise<void> {
    const now = this.#now();
    const every = this.#limits.size > 0 || this.#shedHereLately() ? REFRESH_MS : IDLE_REFRESH_MS;
    if (now - this.#refreshedAt < every) return;
    this.#refreshedAt = now;
    const outcomes = await this.#outcomesSince(new Date(now - ADMISSION_WINDOW_MS).toISOString());
    this.#setShares(outcomes);
  }

  /**
   * A location and class that shed in the window is limited to its delivered rate over its offered
   * rate, plus the margin; every other one admits all.
   */
  #setShares(outcomes: readonly LocationRunOutcome[]): void {
    const offered = new Map<string, number>();
    for (const o of this.#offered) offered.set(o.key, (offered.get(o.key) ?? 0) + o.count);
    const limited = new Set<string>();
    for (const { locationId, checkClass, delivered, shed } of outcomes) {
      const key = keyOf(locationId, checkClass);
      const offeredHere = offered.get(key) ?? 0;
      const share = (ADMISSION_MARGIN * delivered) / offeredHere;
      if (shed === 0 || offeredHere < ADMISSION_MIN_OFFERED || share >= 1) continue;
      limited.add(key);
      const credits = this.#limits.get(key)?.credits ?? new Map<string, number>();
      this.#limits.set(key, { share: Math.max(ADMISSION_MIN_SHARE, share), credits });
    }
    for (const key of this.#limits.keys()) if (!limited.has(key)) this.#limits.delete(key);
  }
}
