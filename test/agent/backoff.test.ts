import { describe, expect, it } from 'vitest';
import { Backoff, backoffDelay, retryDelay, SERVICE_BACKOFF, sleep } from '../../src/agent/backoff.ts';

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

describe('retryDelay: the cap follows why the call failed', () => {
  const top = () => 0.999999;
  const unreachable = { unreachable: true } as const;
  const answered = { unreachable: false } as const;

  it('after any number of connection failures the next delay is at most the short cap, with full jitter', () => {
    for (let attempt = 0; attempt < 60; attempt++) {
      expect(retryDelay(attempt, unreachable, { ...SERVICE_BACKOFF, random: top })).toBeLessThanOrEqual(
        SERVICE_BACKOFF.unreachableCapMs as number,
      );
      expect(retryDelay(attempt, unreachable, { ...SERVICE_BACKOFF, random: () => 0 })).toBe(0);
    }
    expect(SERVICE_BACKOFF.unreachableCapMs).toBeLessThanOrEqual(5_000);
  });

  it('an outage of 21 s: the first try after the service is back comes within the short cap, even at the top of every jitter', () => {
    const backoff = new Backoff({ ...SERVICE_BACKOFF, random: top });
    const serviceBackAt = 21_000;
    let now = 0;
    while (now < serviceBackAt) now += backoff.next(unreachable);
    expect(now - serviceBackAt).toBeLessThanOrEqual(SERVICE_BACKOFF.unreachableCapMs as number);
    // The same outage with answers (5xx) keeps the long cap: the service is there, asking it costs.
    const answeredBackoff = new Backoff({ ...SERVICE_BACKOFF, random: top });
    let then = 0;
    while (then < serviceBackAt) then += answeredBackoff.next(answered);
    expect(then - serviceBackAt).toBeGreaterThan(SERVICE_BACKOFF.unreachableCapMs as number);
  });

  it('spreads a fleet that lost the service together over the short cap rather than one burst', () => {
    const cap = SERVICE_BACKOFF.unreachableCapMs as number;
    // 1000 agents, each after its fifth connection failure (the exponent has reached the short cap).
    const delays = Array.from({ length: 1_000 }, () => retryDelay(5, unreachable, SERVICE_BACKOFF));
    const perSecond = Array.from(
      { length: cap / 1000 },
      (_, s) => delays.filter((d) => d >= s * 1000 && d < (s + 1) * 1000).length,
    );
    // Uniform over 5 s is 200 a second; no second gets even twice that (a far bound: this is chance).
    for (const n of perSecond) expect(n).toBeLessThan(400);
    expect(perSecond.reduce((a, b) => a + b, 0)).toBe(1_000);
  });

  it('honours Retry-After (bounded by the long cap) and spreads a fleet over the short cap on top', () => {
    const o = { baseMs: 100, capMs: 10_000, unreachableCapMs: 2_000 };
    expect(retryDelay(0, { unreachable: false, retryAfterMs: 7_000 }, { ...o, random: () => 0 })).toBe(7_000);
    expect(retryDelay(0, { unreachable: false, retryAfterMs: 7_000 }, { ...o, random: () => 0.5 })).toBe(8_000);
    expect(retryDelay(9, { unreachable: false, retryAfterMs: 3_600_000 }, { ...o, random: () => 0 })).toBe(10_000);
  });

  it('without a short cap, connection failures use the long one (callers that do not care)', () => {
    expect(retryDelay(20, unreachable, { baseMs: 100, capMs: 10_000, random: () => 0.5 })).toBe(5_000);
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
