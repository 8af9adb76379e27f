/**
 * The collection after a burst: once per burst, only when no run finished for the quiet period,
 * never for a trickle of runs, and not at all without --expose-gc.
 */
import { afterEach, beforeEach, expect, it, vi } from 'vitest';
import { IdleMemoryRelease } from '../../src/agent/memory-release.ts';

let release: IdleMemoryRelease | undefined;
beforeEach(() => {
  vi.useFakeTimers();
});
afterEach(() => {
  release?.stop();
  vi.useRealTimers();
});

function started(minRuns: number) {
  const gc = vi.fn();
  const log: number[] = [];
  release = new IdleMemoryRelease({ quietMs: 10_000, minRuns, gc, now: Date.now, released: (runs) => log.push(runs) });
  return { gc, log, release };
}

it('collects once after a burst, when no run has finished for the quiet period', async () => {
  const { gc, log, release } = started(100);
  for (let i = 0; i < 150; i++) {
    release.runFinished();
    await vi.advanceTimersByTimeAsync(50);
  }
  // Runs kept finishing every 50 ms: never quiet, no collection while they ran.
  expect(gc).not.toHaveBeenCalled();
  await vi.advanceTimersByTimeAsync(9_000);
  expect(gc).not.toHaveBeenCalled();
  await vi.advanceTimersByTimeAsync(6_000);
  expect(gc).toHaveBeenCalledTimes(1);
  expect(log).toEqual([150]);
  // Quiet on: nothing more to give back until the next burst.
  await vi.advanceTimersByTimeAsync(60_000);
  expect(gc).toHaveBeenCalledTimes(1);
});

it('leaves a trickle of runs alone', async () => {
  const { gc, release } = started(100);
  for (let i = 0; i < 99; i++) release.runFinished();
  await vi.advanceTimersByTimeAsync(60_000);
  expect(gc).not.toHaveBeenCalled();
  release.runFinished();
  await vi.advanceTimersByTimeAsync(15_000);
  expect(gc).toHaveBeenCalledTimes(1);
});

it('does nothing, and keeps no timer, without gc (no --expose-gc)', () => {
  release = new IdleMemoryRelease({ gc: undefined });
  expect(release.enabled).toBe(false);
  expect(vi.getTimerCount()).toBe(0);
});
