import { describe, expect, it } from 'vitest';
import { capacityOf, capacityRatio, fellBehind } from '../../scripts/bench/_capacity.ts';

const criteria = { minHeldFraction: 0.95, lateBoundMs: 1000 };

describe('falling behind (scripts/bench/_capacity.ts)', () => {
  it('holds a step with 95 % of the expected probes and lateness p99 at the bound', () => {
    expect(fellBehind({ n: 100, expected: 600, held: 570, lateP99Ms: 1000 }, criteria)).toBeNull();
  });

  it('falls behind under 95 % of the expected probes, saying how many', () => {
    expect(fellBehind({ n: 100, expected: 600, held: 569, lateP99Ms: 3 }, criteria)).toBe(
      'held 94.8 % of 600 expected (< 95 %)',
    );
  });

  it('falls behind when the lateness p99 passes the bound, and gives every reason', () => {
    expect(fellBehind({ n: 100, expected: 600, held: 0, lateP99Ms: 1001 }, criteria)).toBe(
      'held 0.0 % of 600 expected (< 95 %); lateness p99 1001 ms (> 1000 ms)',
    );
  });

  it('falls behind when there is no lateness figure (nothing ran)', () => {
    expect(fellBehind({ n: 100, expected: 600, held: 600, lateP99Ms: Number.NaN }, criteria)).toMatch(
      /lateness p99 NaN ms/,
    );
  });
});

describe('capacity and ratio', () => {
  it('is the last step held before the first that fell behind', () => {
    const c = capacityOf([
      { n: 1000, fellBehind: null },
      { n: 2000, fellBehind: null },
      { n: 4000, fellBehind: 'held 80 %' },
    ]);
    expect(c).toEqual({ n: 2000, kind: 'exact' });
  });

  it('is a lower bound when every step held, and below the first step when that one fell behind', () => {
    expect(
      capacityOf([
        { n: 200, fellBehind: null },
        { n: 400, fellBehind: null },
      ]),
    ).toEqual({ n: 400, kind: 'atLeast' });
    expect(capacityOf([{ n: 200, fellBehind: 'late' }])).toEqual({ n: 0, kind: 'below' });
  });

  it('says whether the ratio is exact or a bound', () => {
    expect(capacityRatio({ n: 4000, kind: 'exact' }, { n: 8000, kind: 'exact' })).toEqual({
      ratio: 0.5,
      kind: 'exact',
    });
    expect(capacityRatio({ n: 16000, kind: 'atLeast' }, { n: 8000, kind: 'exact' })).toEqual({
      ratio: 2,
      kind: 'atLeast',
    });
    expect(capacityRatio({ n: 4000, kind: 'exact' }, { n: 16000, kind: 'atLeast' })).toEqual({
      ratio: 0.25,
      kind: 'atMost',
    });
    expect(capacityRatio({ n: 0, kind: 'below' }, { n: 8000, kind: 'exact' })).toEqual({
      ratio: null,
      kind: 'unknown',
    });
    expect(capacityRatio({ n: 400, kind: 'atLeast' }, { n: 400, kind: 'atLeast' })).toEqual({
      ratio: null,
      kind: 'unknown',
    });
  });
});
