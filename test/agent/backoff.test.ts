import { describe, expect, it } from 'vitest';
import { Backoff, backoffDelay, sleep } from '../../src/agent/backoff.ts';

describe('backoffDelay (full jitter)', () => {
  it('stays within [0, min(cap, base * 2^attempt)]', () => {
    for (let attempt = 0; attempt < 20; attempt++) {
      const ceiling = Math.min(10_000, 100 * 2 ** attempt);
      expect(backoffDelay(attempt, { baseMs: 100, capMs: 10_000, random: () => 0 })).toBe(0);
      const top = backoffDelay(attempt, { baseMs: 100, capMs: 10_000, random: () => 0.999999 });
      expect(top).toBeLessThanOrEqual(ceiling);
      expect(top).toBeGreaterThanOrEqual(Math.floor(ceiling * 0.99));
    }
  });

  it('doubles until the cap, then stays there', () => {
    const half = (attempt: number) => backoffDelay(attempt, { baseMs: 100, capMs: 1_000, random: () => 0.5 });
    expect([0, 1, 2, 3, 4, 5].map(half)).toEqual([50, 100, 200, 400, 500, 500]);
  });

  it('stays finite for huge attempt counts', () => {
    expect(backoffDelay(10_000, { baseMs: 1, capMs: 60_000, random: () => 0.5 })).toBe(30_000);
  });

  it('Backoff grows per next() and resets', () => {
    const b = new Backoff({ baseMs: 10, capMs: 1_000, random: () => 0.5 });
    expect([b.next(), b.next(), b.next()]).toEqual([5, 10, 20]);
    expect(b.attempt).toBe(3);
    b.reset();
    expect(b.next()).toBe(5);
  });
});

describe('sleep', () => {
  it('resolves true after the time', async () => {
    await expect(sleep(1)).resolves.toBe(true);
  });

  it('resolves false at once when aborted', async () => {
    const ac = new AbortController();
    const p = sleep(60_000, ac.signal);
    ac.abort();
    await expect(p).resolves.toBe(false);
  });

  it('resolves false for an already aborted signal', async () => {
    await expect(sleep(60_000, AbortSignal.abort())).resolves.toBe(false);
  });
});
