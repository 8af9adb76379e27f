/**
 * Overload admission (src/service/dispatch/admission.ts) on its own: a clock the test moves and the
 * store's outcomes as the test states them, so each rule is seen in isolation. The same rules over a
 * real store and agent API are in dispatch-overload.test.ts.
 */
import { describe, expect, it } from 'vitest';
import {
  ADMISSION_MARGIN,
  ADMISSION_MIN_OFFERED,
  ADMISSION_MIN_SHARE,
  OverloadAdmission,
} from '../../src/service/dispatch/admission.ts';
import type { LocationRunOutcome } from '../../src/service/store/dispatch-types.ts';

const due = (checks: number, locationId = 'loc') =>
  Array.from({ length: checks }, (_, i) => ({ check: { id: `c${i}`, checkType: 'API' as const }, locationId }));

/** Admission over outcomes the test sets; `reads` counts the store reads. */
function admission(random = () => 0.5) {
  const state = { now: 1_000_000, outcomes: [] as LocationRunOutcome[], reads: 0, shedHere: false };
  const a = new OverloadAdmission({
    now: () => state.now,
    shedHereLately: () => state.shedHere,
    random,
    outcomesSince: async () => {
      state.reads += 1;
      return state.outcomes;
    },
  });
  return { a, state };
}

describe('overload admission', () => {
  it('admits every due run while nothing is shed, reading the outcomes every 10 s at most', async () => {
    const { a, state } = admission();
    state.outcomes = [{ locationId: 'loc', checkClass: 'uptime', delivered: 10, shed: 0 }];
    for (let s = 0; s < 20; s++) {
      const { admitted, skipped } = await a.select(due(200));
      expect(admitted).toHaveLength(200);
      expect(skipped.size).toBe(0);
      state.now += 1000;
    }
    expect(state.reads).toBe(2);
  });

  it('while the location sheds, admits what it delivered over what it was offered, plus the margin, spread evenly over its checks', async () => {
    const { a, state } = admission(Math.random);
    // Offered 200 runs in the window; the store says 50 completed and some were shed.
    state.outcomes = [{ locationId: 'loc', checkClass: 'uptime', delivered: 50, shed: 30 }];
    const first = await a.select(due(200));
    const share = (ADMISSION_MARGIN * 50) / 200;
    expect(a.shareOf('loc', 'uptime')).toBeCloseTo(share, 6);
    expect(first.admitted.length + (first.skipped.get('loc') ?? 0)).toBe(200);
    // Forty more slots of the same 200 checks, a refresh apart: the share stays (the test keeps
    // the offered and delivered rates), and each check gets its share of its slots, none going dark.
    const admittedSlots = new Map<string, boolean[]>();
    for (let slot = 0; slot < 40; slot++) {
      state.now += 1000;
      // The window keeps 2 s of offers: 200 a second stays 400 in it, so 100 delivered keeps the share.
      state.outcomes = [{ locationId: 'loc', checkClass: 'uptime', delivered: 100, shed: 30 }];
      const { admitted } = await a.select(due(200));
      expect(a.shareOf('loc', 'uptime')).toBeCloseTo(share, 6);
      const ids = new Set(admitted.map((r) => r.check.id));
      for (const { check } of due(200))
        admittedSlots.set(check.id, [...(admittedSlots.get(check.id) ?? []), ids.has(check.id)]);
    }
    for (const [checkId, slots] of admittedSlots) {
      const kept = slots.filter(Boolean).length;
      expect(kept, checkId).toBeGreaterThanOrEqual(Math.floor(share * 40));
      expect(kept, checkId).toBeLessThanOrEqual(Math.ceil(share * 40) + 1);
      // Never more skipped slots in a row than the share allows (1 / share, rounded up).
      const longestGap = Math.max(...slots.map((_, i) => slots.slice(i).findIndex(Boolean)).filter((n) => n >= 0));
      expect(longestGap, checkId).toBeLessThanOrEqual(Math.ceil(1 / share) - 1);
    }
  });

  it('limits only the location that sheds, and only while it sheds', async () => {
    const { a, state } = admission();
    state.outcomes = [
      { locationId: 'busy', checkClass: 'uptime', delivered: 40, shed: 5 },
      { locationId: 'calm', checkClass: 'uptime', delivered: 40, shed: 0 },
    ];
    const { skipped } = await a.select([...due(200, 'busy'), ...due(200, 'calm')]);
    expect(skipped.get('busy')).toBeGreaterThan(0);
    expect(skipped.has('calm')).toBe(false);
    expect(a.shareOf('calm', 'uptime')).toBe(1);
    // A second on, nothing was shed there in the window: every run is admitted again.
    state.now += 1000;
    state.outcomes = [{ locationId: 'busy', checkClass: 'uptime', delivered: 40, shed: 0 }];
    const after = await a.select(due(200, 'busy'));
    expect(after.admitted).toHaveLength(200);
    expect(a.shareOf('busy', 'uptime')).toBe(1);
  });

  it('never limits a location offered fewer runs than the minimum, nor below the least share', async () => {
    const { a, state } = admission();
    state.outcomes = [{ locationId: 'small', checkClass: 'uptime', delivered: 1, shed: 20 }];
    expect((await a.select(due(ADMISSION_MIN_OFFERED - 1, 'small'))).skipped.size).toBe(0);
    // The next read, 10 s on (nothing was limited, and this replica shed nothing).
    state.now += 10_000;
    state.outcomes = [{ locationId: 'stuck', checkClass: 'uptime', delivered: 0, shed: 500 }];
    await a.select(due(ADMISSION_MIN_OFFERED * 2, 'stuck'));
    expect(a.shareOf('stuck', 'uptime')).toBe(ADMISSION_MIN_SHARE);
  });

  it('reads the outcomes every second, not every 10 s, once this replica has shed', async () => {
    const { a, state } = admission();
    await a.select(due(10));
    expect(state.reads).toBe(1);
    state.now += 1000;
    await a.select(due(10));
    expect(state.reads).toBe(1);
    state.shedHere = true;
    state.now += 1000;
    await a.select(due(10));
    expect(state.reads).toBe(2);
  });
});
