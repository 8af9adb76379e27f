/**
 * Retry strategies as pure rules (src/service/checks/retry-policy.ts): backoff schedules of each
 * type on an injected clock, maxRetries, maxDurationSeconds, onlyOn NETWORK_ERROR, where a retry
 * runs, and which strategy applies (group, FALLBACK, check).
 */
import { describe, expect, it } from 'vitest';
import { tcpCheckRunner } from '../../src/agent/checks/tcp.ts';
import {
  DOUBLE_CHECK_STRATEGY,
  effectiveRetryStrategy,
  isNetworkError,
  planRetry,
  type ResolvedRetryStrategy,
  type RetryStrategy,
  resolveStrategy,
  retryLocation,
} from '../../src/service/checks/retry-policy.ts';
import { context } from '../agent/api-fixtures.ts';
import { freePort } from '../agent/dns-server.ts';
import { startNetServer, tcpCheck } from '../agent/tcp-servers.ts';

/**
 * Plays a chain of failing attempts on a clock that starts at t0 and moves to each retry's due time
 * (plus `runMs` for the run itself); returns the delays between a failure and its retry, in seconds.
 */
function schedule(strategy: RetryStrategy, opts: { networkError?: boolean; runMs?: number } = {}): number[] {
  const resolved = resolveStrategy(strategy);
  const t0 = 1_000_000;
  let now = t0 + (opts.runMs ?? 0);
  const delays: number[] = [];
  for (let attempt = 1; attempt < 50; attempt++) {
    const plan = planRetry(resolved, {
      attempt,
      chainStartedAtMs: t0,
      nowMs: now,
      networkError: opts.networkError ?? true,
    });
    if (!plan) break;
    delays.push((plan.dueAtMs - now) / 1000);
    now = plan.dueAtMs + (opts.runMs ?? 0);
  }
  return delays;
}

describe('backoff schedules', () => {
  it('FIXED waits the base every time, up to maxRetries', () => {
    expect(schedule({ type: 'FIXED', baseBackoffSeconds: 5, maxRetries: 3 })).toEqual([5, 5, 5]);
  });
  it('LINEAR waits base × n', () => {
    expect(schedule({ type: 'LINEAR', baseBackoffSeconds: 5, maxRetries: 4 })).toEqual([5, 10, 15, 20]);
  });
  it('EXPONENTIAL waits base^n (5, 25, 125 as the reference documents)', () => {
    expect(schedule({ type: 'EXPONENTIAL', baseBackoffSeconds: 5, maxRetries: 3 })).toEqual([5, 25, 125]);
  });
  it('SINGLE_RETRY retries once whatever maxRetries says, without a duration bound', () => {
    expect(schedule({ type: 'SINGLE_RETRY', baseBackoffSeconds: 30, maxRetries: 5, maxDurationSeconds: 0 })).toEqual([
      30,
    ]);
  });
  it('uses the defaults: base 60 s, 2 retries, 600 s in all', () => {
    expect(resolveStrategy({ type: 'FIXED' })).toEqual({
      type: 'FIXED',
      baseBackoffSeconds: 60,
      maxRetries: 2,
      maxDurationSeconds: 600,
      sameRegion: true,
      onlyOn: [],
    } satisfies ResolvedRetryStrategy);
    expect(schedule({ type: 'FIXED' })).toEqual([60, 60]);
  });
});

describe('maxDurationSeconds', () => {
  it('stops when the next retry would be due later than the bound after the first attempt', () => {
    // 5 + 25 = 30 s fits into 60 s, the third (125 s more) does not.
    expect(schedule({ type: 'EXPONENTIAL', baseBackoffSeconds: 5, maxRetries: 5, maxDurationSeconds: 60 })).toEqual([
      5, 25,
    ]);
  });
  it("counts the runs' own time, as the reference does", () => {
    // Each run takes 10 s: retries due 20 s, 40 s and 60 s after the start (60 is within the bound);
    // a fourth would be due at 80 s. Without the run time there would be six.
    expect(
      schedule({ type: 'FIXED', baseBackoffSeconds: 10, maxRetries: 10, maxDurationSeconds: 60 }, { runMs: 10_000 }),
    ).toEqual([10, 10, 10]);
    expect(schedule({ type: 'FIXED', baseBackoffSeconds: 10, maxRetries: 10, maxDurationSeconds: 60 })).toHaveLength(6);
  });
});

describe('onlyOn NETWORK_ERROR', () => {
  const strategy: RetryStrategy = { type: 'FIXED', baseBackoffSeconds: 1, maxRetries: 2, onlyOn: ['NETWORK_ERROR'] };
  it('retries network errors only', () => {
    expect(schedule(strategy, { networkError: true })).toEqual([1, 1]);
    expect(schedule(strategy, { networkError: false })).toEqual([]);
  });
  it('calls a failure without a response a network error, a failed assertion not', () => {
    const api = (requestError: string | null, response: unknown) =>
      ({ apiCheckResult: { requestError, response } }) as unknown as Parameters<typeof isNetworkError>[0];
    expect(isNetworkError(api('connect ECONNREFUSED 127.0.0.1:9', null))).toBe(true);
    expect(isNetworkError(api(null, { status: 500 }))).toBe(false);
    expect(isNetworkError({ apiCheckResult: null, details: { requestError: 'connection refused' } })).toBe(true);
    expect(isNetworkError({ apiCheckResult: null, details: {} })).toBe(false);
  });
  it('reads TCP results where the runner puts them: a refused connection is one, a failed assertion not', async () => {
    const port = await freePort();
    const refused = await tcpCheckRunner.run(tcpCheck({ port }), context());
    expect(refused.hasFailures).toBe(true);
    expect(isNetworkError(refused)).toBe(true);
    const echo = await startNetServer((socket) => socket.end('pong'));
    try {
      const check = tcpCheck({
        port: echo.port,
        data: 'ping',
        assertions: [{ source: 'RESPONSE_DATA', comparison: 'EQUALS', property: '', target: 'no', regex: null }],
      });
      const asserted = await tcpCheckRunner.run(check, context());
      expect(asserted.hasFailures).toBe(true);
      expect(isNetworkError(asserted)).toBe(false);
    } finally {
      await echo.close();
    }
  });
});

describe('retryLocation', () => {
  it('retries at the same location with sameRegion', () => {
    expect(retryLocation(true, 'b', ['a', 'b', 'c'])).toBe('b');
  });
  it('otherwise at the next of the check’s locations, wrapping around', () => {
    expect(retryLocation(false, 'b', ['a', 'b', 'c'])).toBe('c');
    expect(retryLocation(false, 'c', ['a', 'b', 'c'])).toBe('a');
  });
  it('with one location that is the only option', () => {
    expect(retryLocation(false, 'a', ['a'])).toBe('a');
    expect(retryLocation(true, 'gone', ['a'])).toBe('a');
    expect(retryLocation(true, 'a', [])).toBeUndefined();
  });
});

describe('effectiveRetryStrategy', () => {
  const own = { retryStrategy: { type: 'LINEAR', baseBackoffSeconds: 3 } };
  it("takes the group's strategy over the check's", () => {
    expect(effectiveRetryStrategy(own, { retryStrategy: { type: 'FIXED', baseBackoffSeconds: 7 } })?.type).toBe(
      'FIXED',
    );
  });
  it("FALLBACK, or no group, means the check's own", () => {
    expect(effectiveRetryStrategy(own, { retryStrategy: 'FALLBACK' })).toMatchObject({
      type: 'LINEAR',
      baseBackoffSeconds: 3,
    });
    expect(effectiveRetryStrategy(own, undefined)?.type).toBe('LINEAR');
  });
  it('null (group or check) means no retries; a check’s doubleCheck is not mapped', () => {
    expect(effectiveRetryStrategy(own, { retryStrategy: null })).toBeNull();
    expect(effectiveRetryStrategy({ doubleCheck: true, retryStrategy: null }, undefined)).toBeNull();
  });
  it('maps the deprecated doubleCheck to one immediate retry at another location', () => {
    expect(resolveStrategy(DOUBLE_CHECK_STRATEGY)).toMatchObject({
      type: 'SINGLE_RETRY',
      baseBackoffSeconds: 0,
      maxRetries: 1,
      sameRegion: false,
    });
  });
});
