import { describe, expect, it } from 'vitest';
import { UptimePrefetch } from '../../src/agent/prefetch.ts';

describe('UptimePrefetch', () => {
  it('holds none before a run has finished', () => {
    expect(new UptimePrefetch(200).extra).toBe(0);
  });

  it('holds half the slots again while runs are short', () => {
    const p = new UptimePrefetch(200);
    for (let i = 0; i < 50; i++) p.ran(20);
    expect(p.extra).toBe(100);
  });

  it('holds fewer as runs lengthen, so the last run in hand waits about the bound for its slot', () => {
    const p = new UptimePrefetch(200, 100);
    p.ran(1_000);
    // 100 ms × 200 slots / 1,000 ms: 20 runs in hand, the last waiting 20 × 1,000 / 200 = 100 ms.
    expect(p.extra).toBe(20);
    p.ran(1_000);
    expect(p.extra).toBe(20);
  });

  it('holds none while runs take seconds, or with one slot', () => {
    const slow = new UptimePrefetch(50);
    slow.ran(30_000);
    expect(slow.extra).toBe(0);
    const one = new UptimePrefetch(1);
    one.ran(5);
    expect(one.extra).toBe(0);
  });

  it('follows a change of run time within a few dozen runs', () => {
    const p = new UptimePrefetch(200);
    for (let i = 0; i < 50; i++) p.ran(20);
    for (let i = 0; i < 60; i++) p.ran(10_000);
    expect(p.extra).toBeLessThan(5);
  });
});
