/**
 * The scheduler on fake timers (time itself is the subject here): intervals, sub-minute offsets,
 * spreading of many checks over the interval, changes, and no catch-up bursts after a stall.
 */
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type { DueRun } from '../../src/service/dispatch/dispatcher.ts';
import { intervalMsOf, phaseMsOf, Scheduler, slotAtOrAfter } from '../../src/service/dispatch/scheduler.ts';
import { SCHEDULE_AHEAD_MS } from '../../src/shared/protocol.ts';
import { SAVE_CHUNK_PAIRS, SAVE_EVERY_MS } from '../../src/service/dispatch/schedule-cursors.ts';
import type { ScheduleCursor } from '../../src/service/store/dispatch-types.ts';
import type { Store, StoredCheck } from '../../src/service/store/store.ts';
import { silentLog } from '../helpers/dispatch-harness.ts';

interface Enqueued {
  checkId: string;
  locationId: string;
  dueAt: number;
  /** Date.now() when the scheduler called enqueue. */
  at: number;
}

function makeCheck(id: string, overrides: Partial<StoredCheck> = {}): StoredCheck {
  return {
    id,
    accountId: 'acc-1',
    checkType: 'API',
    name: id,
    activated: true,
    muted: false,
    frequency: 1,
    frequencyOffset: null,
    locationIds: ['loc-1'],
    body: {},
    createdAt: new Date(0).toISOString(),
    updatedAt: null,
    ...overrides,
  };
}

/** `lastDue`: the newest run's due time per `checkId/locationId`, as the run queue would say. */
function setup(checks: StoredCheck[], lastDue: Map<string, number> = new Map()) {
  const enqueued: Enqueued[] = [];
  const batches: Array<{ at: number; size: number }> = [];
  const cancelled: Array<{ checkId: string; reason: string; keep?: readonly string[] }> = [];
  const saved: ScheduleCursor[] = [];
  const store = {
    checks: { listSchedulable: async () => checks },
    scheduleCursors: {
      async newestDueTimes() {
        return [...lastDue].map(([pair, due]) => {
          const [checkId = '', locationId = ''] = pair.split('/');
          return { checkId, locationId, dueAt: new Date(due).toISOString() };
        });
      },
      async save(cursors: readonly ScheduleCursor[]) {
        saved.push(...cursors);
      },
    },
  } as unknown as Store;
  const dispatcher = {
    async enqueueDue(due: readonly DueRun[]) {
      batches.push({ at: Date.now(), size: due.length });
      for (const { check, locationId, dueAtMs } of due)
        enqueued.push({ checkId: check.id, locationId, dueAt: dueAtMs, at: Date.now() });
      return [];
    },
    async cancelRunsOfCheck(_accountId: string, checkId: string, reason: string, keep?: readonly string[]) {
      cancelled.push({ checkId, reason, keep });
      return 0;
    },
  };
  const scheduler = new Scheduler({ store, config: {} as never, dispatcher, log: silentLog });
  return { scheduler, enqueued, batches, cancelled, saved, store };
}

// A start time that is not aligned to anything, so slot arithmetic is really exercised.
const T0 = Date.UTC(2026, 0, 5, 10, 0, 0) + 12_345;

beforeEach(() => {
  vi.useFakeTimers({ now: T0 });
});
afterEach(() => {
  vi.useRealTimers();
});

describe('intervals', () => {
  it('runs a check at its phase once per interval, enqueued exactly SCHEDULE_AHEAD_MS before the due time', async () => {
    const check = makeCheck('c1', { frequency: 2 });
    const { scheduler, enqueued } = setup([check]);
    await scheduler.start();
    const phase = phaseMsOf('c1', 'loc-1', 120_000);
    const first = slotAtOrAfter(T0, 120_000, phase);
    await vi.advanceTimersByTimeAsync(10 * 60_000);
    expect(enqueued.map((e) => e.dueAt)).toEqual([0, 1, 2, 3, 4].map((k) => first + k * 120_000));
    expect(enqueued.every((e) => e.at === e.dueAt - SCHEDULE_AHEAD_MS)).toBe(true);
    expect(enqueued.every((e) => (e.dueAt - phase) % 120_000 === 0)).toBe(true);
    await scheduler.stop();
  });

  it('runs sub-minute checks every frequencyOffset seconds, on every location', async () => {
    const { scheduler, enqueued } = setup([
      makeCheck('fast', { frequency: 0, frequencyOffset: 10, locationIds: ['loc-1', 'loc-2'] }),
      makeCheck('slow', { frequency: 0, frequencyOffset: 30 }),
    ]);
    await scheduler.start();
    await vi.advanceTimersByTimeAsync(60_000);
    const count = (checkId: string, locationId: string) =>
      enqueued.filter((e) => e.checkId === checkId && e.locationId === locationId).length;
    expect(count('fast', 'loc-1')).toBe(6);
    expect(count('fast', 'loc-2')).toBe(6);
    expect(count('slow', 'loc-1')).toBe(2);
    const fastDue = enqueued.filter((e) => e.checkId === 'fast' && e.locationId === 'loc-1').map((e) => e.dueAt);
    expect(fastDue.slice(1).map((d, i) => d - (fastDue[i] ?? 0))).toEqual([10_000, 10_000, 10_000, 10_000, 10_000]);
    await scheduler.stop();
  });

  it('derives intervals from frequency (minutes) or, at 0, frequencyOffset (seconds)', () => {
    expect(intervalMsOf({ frequency: 5, frequencyOffset: null })).toBe(300_000);
    expect(intervalMsOf({ frequency: 0, frequencyOffset: 20 })).toBe(20_000);
    expect(intervalMsOf({ frequency: 0, frequencyOffset: null })).toBe(10_000);
  });
});

describe('spreading', () => {
  it('spreads 300 checks at 10 s over the whole interval instead of firing them together', async () => {
    const checks = Array.from({ length: 300 }, () =>
      makeCheck(crypto.randomUUID(), { frequency: 0, frequencyOffset: 10 }),
    );
    const { scheduler, enqueued } = setup(checks);
    await scheduler.start();
    // One interval, [T0, T0 + 10 s): a check whose phase is 0 is due at T0 and again at T0 + 10 s, so
    // advancing the whole 10 s counted it twice whenever a random id hashed to phase 0.
    // Plus a tick: a run due in the interval's last 10 ms may be enqueued with the next tick's.
    await vi.advanceTimersByTimeAsync(9_999 + 10);
    const interval = enqueued.filter((e) => e.dueAt < T0 + 10_000);
    expect(interval).toHaveLength(300);
    // 10 one-second buckets: about 30 each if spread evenly; all in one bucket if not spread.
    const buckets = new Array(10).fill(0);
    for (const e of interval) buckets[Math.floor((e.dueAt - T0) / 1000)] += 1;
    expect(Math.max(...buckets)).toBeLessThan(60);
    expect(Math.min(...buckets)).toBeGreaterThan(10);
    expect(new Set(interval.map((e) => e.dueAt)).size).toBeGreaterThan(280);
    await scheduler.stop();
  });

  it('enqueues the runs due within a tick (50 ms) together, each ahead of its due time and never late', async () => {
    const checks = Array.from({ length: 2000 }, () =>
      makeCheck(crypto.randomUUID(), { frequency: 0, frequencyOffset: 10 }),
    );
    const { scheduler, enqueued, batches } = setup(checks);
    await scheduler.start();
    await vi.advanceTimersByTimeAsync(9_999);
    const interval = enqueued.filter((e) => e.dueAt < T0 + 10_000);
    expect(interval).toHaveLength(2000);
    // (Runs due within the first SCHEDULE_AHEAD_MS were enqueued at the start, less ahead.)
    const leads = interval.filter((e) => e.dueAt >= T0 + SCHEDULE_AHEAD_MS).map((e) => e.dueAt - e.at);
    // Ahead by more than the tick left over, never by more than SCHEDULE_AHEAD_MS (+1: a timer may fire early).
    expect(Math.min(...leads)).toBeGreaterThanOrEqual(SCHEDULE_AHEAD_MS - 50);
    expect(Math.max(...leads)).toBeLessThanOrEqual(SCHEDULE_AHEAD_MS + 1);
    // 2000 runs over 10 s, one batch a tick at most: about two hundred batches, not two thousand.
    expect(batches.length).toBeLessThanOrEqual(201);
    const gaps = batches.slice(1).map((b, i) => b.at - (batches[i]?.at ?? 0));
    expect(Math.min(...gaps)).toBeGreaterThanOrEqual(50);
    await scheduler.stop();
  });

  it('keeps the phase of a check across restarts (it is a hash of the ids, not of the start time)', () => {
    expect(phaseMsOf('check-a', 'loc-1', 60_000)).toBe(phaseMsOf('check-a', 'loc-1', 60_000));
    expect(phaseMsOf('check-a', 'loc-1', 60_000)).not.toBe(phaseMsOf('check-a', 'loc-2', 60_000));
  });
});

describe('changes', () => {
  it('schedules a new check, reschedules a changed interval, and stops a deactivated or deleted one', async () => {
    const { scheduler, enqueued, cancelled } = setup([]);
    await scheduler.start();
    const check = makeCheck('c1', { frequency: 0, frequencyOffset: 10 });
    const createdAt = Date.now();
    await scheduler.checkChanged('acc-1', 'c1', check);
    await vi.advanceTimersByTimeAsync(30_000);
    // A new check runs once at once, then once per 10 s slot: 1 + 3 runs in 30 s.
    expect(enqueued).toHaveLength(4);
    expect(enqueued[0]!.dueAt).toBe(createdAt);

    await scheduler.checkChanged('acc-1', 'c1', { ...check, frequencyOffset: 30 });
    expect(cancelled.at(-1)).toMatchObject({ checkId: 'c1', keep: ['loc-1'] });
    enqueued.length = 0;
    await vi.advanceTimersByTimeAsync(60_000);
    expect(enqueued).toHaveLength(2);

    await scheduler.checkChanged('acc-1', 'c1', { ...check, activated: false });
    expect(cancelled.at(-1)).toMatchObject({ checkId: 'c1', reason: 'cancelled: the check was deactivated' });
    await scheduler.checkChanged('acc-1', 'c1', undefined);
    expect(cancelled.at(-1)).toMatchObject({ checkId: 'c1', reason: 'cancelled: the check was deleted' });
    enqueued.length = 0;
    await vi.advanceTimersByTimeAsync(60_000);
    expect(enqueued).toHaveLength(0);
    // Nothing to fire: only the interval that saves schedule cursors is left.
    expect(vi.getTimerCount()).toBe(1);
    await scheduler.stop();
    expect(vi.getTimerCount()).toBe(0);
  });

  it("after the immediate first run of a new check, keeps to the pair's phase (checks created together do not fire together), at least half an interval later", async () => {
    const { scheduler, enqueued } = setup([]);
    await scheduler.start();
    const checks = Array.from({ length: 50 }, () =>
      makeCheck(crypto.randomUUID(), { frequency: 0, frequencyOffset: 10 }),
    );
    for (const check of checks) await scheduler.checkChanged('acc-1', check.id, check);
    await vi.advanceTimersByTimeAsync(25_000);
    for (const check of checks) {
      const [first, ...rest] = enqueued.filter((e) => e.checkId === check.id).map((e) => e.dueAt);
      expect(first).toBe(T0);
      const phase = phaseMsOf(check.id, 'loc-1', 10_000);
      expect(rest.length).toBeGreaterThanOrEqual(2);
      for (const due of rest) expect(((due % 10_000) + 10_000) % 10_000).toBe(phase);
      // Not right on the heels of the first run (which would supersede it while still queued): at
      // least half an interval after it.
      expect(rest[0]! - first!).toBeGreaterThanOrEqual(5_000);
    }
    await scheduler.stop();
  });

  it('runs only the newest missed slot after the process stalled, not a burst of catch-up runs', async () => {
    const { scheduler, enqueued } = setup([makeCheck('c1', { frequency: 0, frequencyOffset: 10 })]);
    await scheduler.start();
    await vi.advanceTimersByTimeAsync(10_000);
    expect(enqueued).toHaveLength(1);
    // The event loop was blocked for 55 s: the wall clock moved on, the pending timer did not fire.
    vi.setSystemTime(Date.now() + 55_000);
    await vi.advanceTimersByTimeAsync(10_000);
    // The overdue slot runs once (late)...
    expect(enqueued).toHaveLength(2);
    const late = enqueued.at(-1)!;
    expect(late.at - late.dueAt).toBeGreaterThanOrEqual(55_000 - SCHEDULE_AHEAD_MS);
    // ...and the next run is the next slot after now: the five missed in between are skipped.
    await vi.advanceTimersByTimeAsync(10_000);
    expect(enqueued).toHaveLength(3);
    const next = enqueued.at(-1)!;
    expect(next.dueAt).toBeGreaterThan(late.at);
    expect(next.dueAt - next.at).toBe(SCHEDULE_AHEAD_MS);
    await scheduler.stop();
  });

  it('stopped and started again (leadership lost and regained), runs each slot once, not once per start', async () => {
    const { scheduler, enqueued } = setup([makeCheck('c1', { frequency: 0, frequencyOffset: 10 })]);
    await scheduler.start();
    await scheduler.stop();
    await scheduler.start();
    await vi.advanceTimersByTimeAsync(30_000);
    expect(enqueued).toHaveLength(3);
    expect(new Set(enqueued.map((e) => e.dueAt)).size).toBe(3);
    await scheduler.stop();
  });

  it('keeps no entries while stopped (another replica leads) but still cancels runs a change makes pointless', async () => {
    const { scheduler, enqueued, cancelled } = setup([]);
    const check = makeCheck('c1', { frequency: 0, frequencyOffset: 10 });
    await scheduler.checkChanged('acc-1', 'c1', check);
    expect(scheduler.nextDue('c1')).toEqual([]);
    expect(cancelled).toEqual([
      { checkId: 'c1', reason: 'cancelled: the check no longer runs at this location', keep: ['loc-1'] },
    ]);
    await vi.advanceTimersByTimeAsync(30_000);
    expect(enqueued).toHaveLength(0);
    expect(vi.getTimerCount()).toBe(0);
  });

  it('a start that finds the previous slot of a pair never enqueued (no leader then) runs that slot at once, and only that one', async () => {
    const check = makeCheck('c1', { frequency: 0, frequencyOffset: 10 });
    const phase = phaseMsOf('c1', 'loc-1', 10_000);
    const next = slotAtOrAfter(T0, 10_000, phase);
    // The old leader's last run was three slots before the next one: two slots passed without a scheduler.
    const { scheduler, enqueued } = setup([check], new Map([['c1/loc-1', next - 30_000]]));
    await scheduler.start();
    await vi.advanceTimersByTimeAsync(0);
    expect(enqueued.map((e) => e.dueAt)).toEqual([next - 10_000]);
    await vi.advanceTimersByTimeAsync(next - T0);
    expect(enqueued.map((e) => e.dueAt)).toEqual([next - 10_000, next]);
    await scheduler.stop();
  });

  it("a start takes a slot within half an interval of a new check's first run as skipped, not missed, as the old leader did", async () => {
    const phase = phaseMsOf('c1', 'loc-1', 10_000);
    const next = slotAtOrAfter(T0, 10_000, phase);
    const previous = next - 10_000;
    const checks = [makeCheck('c1', { frequency: 0, frequencyOffset: 10 })];
    // The first run 2 s before the previous slot: the old leader skipped that slot, so it is not run now.
    const skipped = setup(checks, new Map([['c1/loc-1', previous - 2_000]]));
    await skipped.scheduler.start();
    await vi.advanceTimersByTimeAsync(next - T0);
    expect(skipped.enqueued.map((e) => e.dueAt)).toEqual([next]);
    await skipped.scheduler.stop();
    // The first run 6 s before it: the old leader would have run that slot, and nobody did.
    const missed = setup(checks, new Map([['c1/loc-1', previous - 6_000]]));
    await missed.scheduler.start();
    await vi.advanceTimersByTimeAsync(0);
    expect(missed.enqueued.map((e) => e.dueAt)).toEqual([previous]);
    await missed.scheduler.stop();
  });

  it('a start after the previous slot was enqueued (a clean hand-over), or for a pair that never ran, waits for the next slot', async () => {
    const phase = phaseMsOf('c1', 'loc-1', 10_000);
    const next = slotAtOrAfter(T0, 10_000, phase);
    const checks = [
      makeCheck('c1', { frequency: 0, frequencyOffset: 10 }),
      makeCheck('c2', { frequency: 0, frequencyOffset: 10 }),
    ];
    const { scheduler, enqueued } = setup(checks, new Map([['c1/loc-1', next - 10_000]]));
    await scheduler.start();
    await vi.advanceTimersByTimeAsync(0);
    expect(enqueued).toEqual([]);
    await scheduler.stop();
  });

  it('a start after the last leader enqueued the next slot ahead of time goes on after it, not running it twice', async () => {
    const phase = phaseMsOf('c1', 'loc-1', 10_000);
    const next = slotAtOrAfter(T0, 10_000, phase);
    const { scheduler, enqueued } = setup(
      [makeCheck('c1', { frequency: 0, frequencyOffset: 10 })],
      new Map([['c1/loc-1', next]]),
    );
    await scheduler.start();
    await vi.advanceTimersByTimeAsync(next + 10_000 - T0);
    expect(enqueued.map((e) => e.dueAt)).toEqual([next + 10_000]);
    await scheduler.stop();
  });

  it("a start after a new check's first run just before the next slot skips that slot, as the old leader would have", async () => {
    const phase = phaseMsOf('c1', 'loc-1', 10_000);
    const next = slotAtOrAfter(T0, 10_000, phase);
    const { scheduler, enqueued } = setup(
      [makeCheck('c1', { frequency: 0, frequencyOffset: 10 })],
      new Map([['c1/loc-1', next - 2_000]]),
    );
    await scheduler.start();
    await vi.advanceTimersByTimeAsync(next + 10_000 - T0);
    expect(enqueued.map((e) => e.dueAt)).toEqual([next + 10_000]);
    await scheduler.stop();
  });

  it('stop leaves no timer behind', async () => {
    const { scheduler } = setup([makeCheck('c1')]);
    await scheduler.start();
    // The next fire, and the interval that saves schedule cursors.
    expect(vi.getTimerCount()).toBe(2);
    await scheduler.stop();
    expect(vi.getTimerCount()).toBe(0);
  });
});

describe('schedule cursors', () => {
  const newestDue = (enqueued: Enqueued[], checkId: string) =>
    new Date(Math.max(...enqueued.filter((e) => e.checkId === checkId).map((e) => e.dueAt))).toISOString();

  it("saves each pair's newest enqueued slot every SAVE_EVERY_MS in one batch, and what is left at stop", async () => {
    const checks = [
      makeCheck('c1', { frequency: 0, frequencyOffset: 10 }),
      makeCheck('c2', { frequency: 0, frequencyOffset: 10 }),
    ];
    const { scheduler, enqueued, saved } = setup(checks);
    await scheduler.start();
    await vi.advanceTimersByTimeAsync(SAVE_EVERY_MS);
    // Three runs of each pair by now, one cursor each: the newest.
    expect(enqueued.filter((e) => e.checkId === 'c1').length).toBeGreaterThanOrEqual(3);
    expect(saved).toEqual(
      expect.arrayContaining([
        { checkId: 'c1', locationId: 'loc-1', dueAt: newestDue(enqueued, 'c1') },
        { checkId: 'c2', locationId: 'loc-1', dueAt: newestDue(enqueued, 'c2') },
      ]),
    );
    expect(saved).toHaveLength(2);
    await vi.advanceTimersByTimeAsync(10_000);
    await scheduler.stop();
    expect(saved.slice(2)).toEqual(
      expect.arrayContaining([
        { checkId: 'c1', locationId: 'loc-1', dueAt: newestDue(enqueued, 'c1') },
        { checkId: 'c2', locationId: 'loc-1', dueAt: newestDue(enqueued, 'c2') },
      ]),
    );
    expect(saved).toHaveLength(4);
  });

  it('saves no cursor for a check deleted since its last run', async () => {
    const { scheduler, enqueued, saved } = setup([makeCheck('c1', { frequency: 0, frequencyOffset: 10 })]);
    await scheduler.start();
    await vi.advanceTimersByTimeAsync(10_000);
    expect(enqueued.length).toBeGreaterThan(0);
    await scheduler.checkChanged('acc-1', 'c1', undefined);
    await vi.advanceTimersByTimeAsync(SAVE_EVERY_MS);
    await scheduler.stop();
    expect(saved).toEqual([]);
  });

  it('saves many pairs a chunk per transaction, in key order, keeping a failed chunk for the next save', async () => {
    const n = 2 * SAVE_CHUNK_PAIRS + 1;
    const checks = Array.from({ length: n }, (_, i) => makeCheck(`c${i}`, { frequency: 0, frequencyOffset: 10 }));
    const { scheduler, saved, store } = setup(checks);
    const save = store.scheduleCursors.save.bind(store.scheduleCursors);
    const calls: number[] = [];
    store.scheduleCursors.save = async (cursors) => {
      calls.push(cursors.length);
      // The second chunk of the first save fails.
      if (calls.length === 2) throw new Error('store away');
      return save(cursors);
    };
    await scheduler.start();
    await vi.advanceTimersByTimeAsync(SAVE_EVERY_MS);
    // The chunks are a turn of the event loop apart.
    await vi.waitFor(() => expect(calls).toEqual([SAVE_CHUNK_PAIRS, SAVE_CHUNK_PAIRS, 1]));
    expect(new Set(saved.map((c) => c.checkId)).size).toBe(SAVE_CHUNK_PAIRS + 1);
    // In key order (check id, then location), so a chunk writes one stretch of the table.
    const ids = saved.map((c) => c.checkId);
    expect(ids).toEqual([...ids].sort());
    await scheduler.stop();
    // At stop the failed chunk's pairs are saved, with those enqueued since.
    expect(new Set(saved.map((c) => c.checkId)).size).toBe(n);
    expect(calls.slice(3).every((k) => k <= SAVE_CHUNK_PAIRS)).toBe(true);
  });

  it('keeps the cursors of a failed save for the next one', async () => {
    const { scheduler, enqueued, saved, store } = setup([makeCheck('c1', { frequency: 0, frequencyOffset: 10 })]);
    const save = store.scheduleCursors.save.bind(store.scheduleCursors);
    let failures = 1;
    store.scheduleCursors.save = async (cursors) => {
      if (failures-- > 0) throw new Error('store away');
      return save(cursors);
    };
    await scheduler.start();
    await vi.advanceTimersByTimeAsync(SAVE_EVERY_MS);
    expect(saved).toEqual([]);
    const dueAtFailedSave = newestDue(enqueued, 'c1');
    await scheduler.stop();
    expect(saved).toEqual([{ checkId: 'c1', locationId: 'loc-1', dueAt: newestDue(enqueued, 'c1') }]);
    expect((saved[0]?.dueAt ?? '') >= dueAtFailedSave).toBe(true);
  });
});
