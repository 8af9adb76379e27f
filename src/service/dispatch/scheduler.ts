/**
 * The scheduler: makes every activated check come due at each of its private locations once per
 * interval, and enqueues the run at that moment.
 *
 * - Spreading: each (check, location) pair has a fixed phase within its interval, a stable hash of
 *   the two ids, so 300 checks every 10 s are spread over the 10 s instead of all firing at :00.
 *   Slots are aligned to the epoch (dueAt = k * interval + phase), so a restart keeps the rhythm.
 * - Ahead of time: a run is enqueued up to SCHEDULE_AHEAD_MS before it is due, and the agent that
 *   leases it waits for its due time (Job.startInMs; docs/protocol.md "Leasing ahead"). So each fire
 *   takes a tick's worth of runs (one transaction), and each waiting agent takes them in one lease,
 *   while every run still starts at its due time, not at the tick.
 * - Precision: one timer, for the earliest due pair across all checks (a min-heap keyed by due
 *   time). Nothing scans all checks per tick. Fires are at least a tick (50 ms) apart, and while a
 *   batch is being committed the next waits for it.
 * - One transaction per batch: runs that come due while a batch commits wait for it and go in the
 *   next one together (a group commit), so at high rates the commits do not grow with the runs.
 * - No catch-up bursts: when the process was stalled past several slots, only the newest is run.
 * - Nothing lost at a start: a scheduler that starts (a restart, or a new leader after the old one
 *   died) enqueues a pair's newest slot at once when its cursor and the runs show it was never
 *   enqueued, late but run, instead of waiting for the next slot. Only that one slot: the same rule
 *   as after a stall. Cursors are saved in bulk (./schedule-cursors.ts).
 */
import { createHash } from 'node:crypto';
import type { ServiceConfig } from '../config.ts';
import { SCHEDULE_AHEAD_MS } from '../../shared/protocol.ts';
import type { Store, StoredCheck } from '../store/store.ts';
import type { DispatchLog, Dispatcher, DueRun } from './dispatcher.ts';
import { loadNewestDueTimes, newestDueOf, ScheduleCursorSaver } from './schedule-cursors.ts';

export interface SchedulerOptions {
  store: Store;
  config: ServiceConfig;
  dispatcher: Pick<Dispatcher, 'enqueueDue' | 'cancelRunsOfCheck'>;
  /**
   * Whether and where a check runs, its group considered (checks/group-of.ts placementOf). Without
   * it, a check's own activation and locations.
   */
  placement?: (check: StoredCheck) => Promise<{ activated: boolean; locationIds: string[] }>;
  log: DispatchLog;
}

/** Sub-minute checks (frequency 0) without a valid offset run every 10 s, the shortest interval. */
const DEFAULT_SUB_MINUTE_SECONDS = 10;
/**
 * The shortest time between two fires. Each fire is a transaction, and its wake-up a claim and a
 * lease answer for each waiting agent: at a thousand runs a second, firing every 10 ms cost a commit,
 * two claims and a lease round trip per ten runs (BENCHMARKS.md "Leasing ahead"). Runs are enqueued
 * SCHEDULE_AHEAD_MS ahead, more than a tick, so a tick never makes a run late.
 */
const TICK_MS = 50;
/** Runs per transaction at most: a start that finds thousands missed must not hold the store for long. */
const MAX_BATCH = 500;
/** setTimeout's longest delay is 2^31-1 ms; we re-arm well before that. */
const MAX_TIMER_MS = 60 * 60 * 1000;

export function intervalMsOf(check: Pick<StoredCheck, 'frequency' | 'frequencyOffset'>): number {
  if (check.frequency > 0) return check.frequency * 60_000;
  const seconds =
    check.frequencyOffset && check.frequencyOffset > 0 ? check.frequencyOffset : DEFAULT_SUB_MINUTE_SECONDS;
  return seconds * 1000;
}

/** Stable offset of a (check, location) pair inside its interval, in ms. */
export function phaseMsOf(checkId: string, locationId: string, intervalMs: number): number {
  const digest = createHash('sha256').update(`${checkId}\u0000${locationId}`).digest();
  return digest.readUIntBE(0, 6) % intervalMs;
}

/** The first slot (k * interval + phase) at or after `t`. */
export function slotAtOrAfter(t: number, intervalMs: number, phaseMs: number): number {
  return Math.ceil((t - phaseMs) / intervalMs) * intervalMs + phaseMs;
}

/**
 * The slot a pair runs next after its run due at `dueMs`: the next slot at least half an interval on,
 * so a new check's immediate first run (off its phase) is not superseded by a slot right after it.
 */
export function slotAfterRun(dueMs: number, intervalMs: number, phaseMs: number): number {
  return slotAtOrAfter(dueMs + intervalMs / 2, intervalMs, phaseMs);
}

interface Entry {
  check: StoredCheck;
  locationId: string;
  intervalMs: number;
  phaseMs: number;
  dueMs: number;
  /** Cleared when the check changes or goes away; the heap drops such entries lazily. */
  live: boolean;
}

/** A binary min-heap of entries by dueMs. */
class DueHeap {
  readonly #items: Entry[] = [];

  get size(): number {
    return this.#items.length;
  }

  peek(): Entry | undefined {
    return this.#items[0];
  }

  push(entry: Entry): void {
    const a = this.#items;
    a.push(entry);
    let i = a.length - 1;
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (a[parent]!.dueMs <= a[i]!.dueMs) break;
      [a[parent], a[i]] = [a[i]!, a[parent]!];
      i = parent;
    }
  }

  pop(): Entry | undefined {
    const a = this.#items;
    const top = a[0];
    const last = a.pop();
    if (a.length > 0 && last) {
      a[0] = last;
      let i = 0;
      for (;;) {
        const l = 2 * i + 1;
        const r = l + 1;
        let min = i;
        if (l < a.length && a[l]!.dueMs < a[min]!.dueMs) min = l;
        if (r < a.length && a[r]!.dueMs < a[min]!.dueMs) min = r;
        if (min === i) break;
        [a[min], a[i]] = [a[i]!, a[min]!];
        i = min;
      }
    }
    return top;
  }

  clear(): void {
    this.#items.length = 0;
  }
}

export class Scheduler {
  readonly #store: Store;
  readonly #dispatcher: SchedulerOptions['dispatcher'];
  readonly #log: DispatchLog;
  readonly #placement: NonNullable<SchedulerOptions['placement']>;
  /** Live entries by check id, one per location of the check. */
  readonly #byCheck = new Map<string, Entry[]>();
  readonly #heap = new DueHeap();
  #timer: NodeJS.Timeout | undefined;
  #timerAt = Number.POSITIVE_INFINITY;
  #running = false;
  /** Due runs not yet handed to the dispatcher, and whether a batch of them is being committed. */
  #due: DueRun[] = [];
  #committing = false;
  #lastFireMs = Number.NEGATIVE_INFINITY;
  readonly #cursors: ScheduleCursorSaver;

  constructor(opts: SchedulerOptions) {
    this.#store = opts.store;
    this.#dispatcher = opts.dispatcher;
    this.#log = opts.log;
    this.#placement = opts.placement ?? (async (check) => check);
    this.#cursors = new ScheduleCursorSaver({
      repo: opts.store.scheduleCursors,
      log: opts.log,
      runs: (checkId, locationId) => this.#byCheck.get(checkId)?.some((e) => e.locationId === locationId) ?? false,
    });
  }

  async start(): Promise<void> {
    if (this.#running) return;
    this.#running = true;
    const checks = await this.#store.checks.listSchedulable();
    const newest = await loadNewestDueTimes(this.#store.scheduleCursors, Date.now());
    let missed = 0;
    for (const check of checks) {
      const where = await this.#placement(check);
      if (!where.activated || where.locationIds.length === 0) continue;
      const lastDueAt = new Map<string, number>();
      for (const locationId of where.locationIds) {
        const last = newestDueOf(newest, check.id, locationId);
        if (last !== undefined) lastDueAt.set(locationId, last);
      }
      const entries = this.#put(check, where.locationIds, { lastDueAt });
      missed += entries.filter((e) => e.dueMs < Date.now()).length;
    }
    this.#log.info({ checks: checks.length, pairs: this.#liveCount(), missed }, 'scheduler started');
    this.#cursors.start();
    this.#arm();
  }

  /**
   * Stops and forgets every entry: a later start() (this replica leads again) reloads them from the
   * store. The cursors of what it enqueued are saved first, for whoever starts next.
   */
  async stop(): Promise<void> {
    this.#running = false;
    this.#disarm();
    this.#cursors.stop();
    await this.#cursors.save();
    for (const checkId of [...this.#byCheck.keys()]) this.#remove(checkId);
    this.#heap.clear();
  }

  /** Called by the public API after a check was created, updated (check given) or deleted (undefined). */
  async checkChanged(accountId: string, checkId: string, check: StoredCheck | undefined): Promise<void> {
    // Read before touching the entries, so no await falls between removing and re-adding them.
    const where = check && (await this.#placement(check));
    const wasScheduled = this.#byCheck.has(checkId);
    this.#remove(checkId);
    const runsHere = check && where?.activated && where.locationIds.length > 0;
    // A scheduler that is not running (another replica leads) keeps no entries; its start() loads them.
    if (runsHere && this.#running) {
      // A check that was just created or activated runs once right away, so its owner sees a result
      // without waiting up to a whole interval; from then on it keeps to its phase in the interval.
      // (On start-up and on edits of a running check there is no such extra run: no bursts.)
      this.#put(check, where.locationIds, { runNow: !wasScheduled });
    }
    if (runsHere) {
      // Moved off a location: its open runs there have no reason to run any more.
      await this.#dispatcher.cancelRunsOfCheck(
        accountId,
        checkId,
        'cancelled: the check no longer runs at this location',
        where.locationIds,
      );
    } else {
      await this.#dispatcher.cancelRunsOfCheck(
        accountId,
        checkId,
        !check
          ? 'cancelled: the check was deleted'
          : check.activated && !where?.activated
            ? "cancelled: the check's group was deactivated"
            : 'cancelled: the check was deactivated',
      );
    }
    if (this.#running) this.#arm();
  }

  /** When each (check, location) pair is next due, for tests and diagnostics. */
  nextDue(checkId: string): Array<{ locationId: string; dueAt: number; intervalMs: number }> {
    return (this.#byCheck.get(checkId) ?? []).map((e) => ({
      locationId: e.locationId,
      dueAt: e.dueMs,
      intervalMs: e.intervalMs,
    }));
  }

  #liveCount(): number {
    let n = 0;
    for (const list of this.#byCheck.values()) n += list.length;
    return n;
  }

  /**
   * `lastDueAt` (at a start): each location's newest run. The pair goes on from the slot that follows
   * it (slotAfterRun), as firing does: so a slot the last leader already enqueued ahead of time, or
   * skipped because it came within half an interval of a new check's first run, is not run again.
   * When that slot is before the next one, a slot came and went with no scheduler running: the newest
   * such slot is due now, rather than the next.
   * A location that never ran is new, not missed: it starts at its next slot.
   */
  #put(
    check: StoredCheck,
    locationIds: readonly string[],
    { runNow = false, lastDueAt }: { runNow?: boolean; lastDueAt?: ReadonlyMap<string, number> } = {},
  ): Entry[] {
    const intervalMs = intervalMsOf(check);
    const now = Date.now();
    const entries = locationIds.map((locationId): Entry => {
      const phaseMs = phaseMsOf(check.id, locationId, intervalMs);
      const next = slotAtOrAfter(now, intervalMs, phaseMs);
      const last = lastDueAt?.get(locationId);
      const after = last === undefined ? next : slotAfterRun(last, intervalMs, phaseMs);
      // `after < next`: the slot the last leader would have run is past, and nobody enqueued it.
      const dueMs = runNow ? now : after < next ? next - intervalMs : after;
      return { check, locationId, intervalMs, phaseMs, dueMs, live: true };
    });
    this.#byCheck.set(check.id, entries);
    for (const entry of entries) this.#heap.push(entry);
    return entries;
  }

  #remove(checkId: string): void {
    for (const entry of this.#byCheck.get(checkId) ?? []) entry.live = false;
    this.#byCheck.delete(checkId);
  }

  #disarm(): void {
    if (this.#timer) clearTimeout(this.#timer);
    this.#timer = undefined;
    this.#timerAt = Number.POSITIVE_INFINITY;
  }

  /** Points the one timer at the earliest live entry (dropping dead ones on the way). */
  #arm(): void {
    let top = this.#heap.peek();
    while (top && !top.live) {
      this.#heap.pop();
      top = this.#heap.peek();
    }
    if (!top) {
      this.#disarm();
      return;
    }
    // Not sooner than a tick after the last fire: runs due within a tick go in one batch.
    const at = Math.max(top.dueMs - SCHEDULE_AHEAD_MS, this.#lastFireMs + TICK_MS);
    if (this.#timer && this.#timerAt <= at) return;
    this.#disarm();
    const delay = Math.min(Math.max(0, at - Date.now()), MAX_TIMER_MS);
    this.#timerAt = at;
    this.#timer = setTimeout(() => this.#fire(), delay);
  }

  #fire(): void {
    this.#timer = undefined;
    this.#timerAt = Number.POSITIVE_INFINITY;
    if (!this.#running) return;
    const now = Date.now();
    this.#lastFireMs = now;
    for (;;) {
      const top = this.#heap.peek();
      // Timers may fire a millisecond early; such a run is still on time.
      if (!top || top.dueMs > now + SCHEDULE_AHEAD_MS + 1) break;
      this.#heap.pop();
      if (!top.live) continue;
      const dueMs = top.dueMs;
      this.#due.push({ check: top.check, locationId: top.locationId, dueAtMs: dueMs });
      // The pair's next slot, not dueMs + interval: a new check's immediate first run is off its phase,
      // and checks created together would otherwise keep firing together.
      let next = slotAfterRun(dueMs, top.intervalMs, top.phaseMs);
      if (next <= now) {
        const skipped = Math.floor((now - dueMs) / top.intervalMs);
        next = slotAtOrAfter(now + 1, top.intervalMs, top.phaseMs);
        this.#log.warn(
          { checkId: top.check.id, locationId: top.locationId, skipped },
          'scheduler fell behind; skipped missed slots',
        );
      }
      top.dueMs = next;
      this.#heap.push(top);
    }
    void this.#commitDue();
    this.#arm();
  }

  /** Hands the due runs to the dispatcher, one batch at a time, until none are left. */
  async #commitDue(): Promise<void> {
    if (this.#committing) return;
    this.#committing = true;
    while (this.#due.length > 0) {
      const batch = this.#due.splice(0, MAX_BATCH);
      try {
        await this.#dispatcher.enqueueDue(batch);
        this.#cursors.record(batch);
      } catch (err) {
        this.#log.error({ err, runs: batch.length }, 'enqueue failed');
      }
    }
    this.#committing = false;
  }
}
