import { rmSync } from 'node:fs';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createAccount } from '../../src/service/accounts.ts';
import { bucketOf, percentiles } from '../../src/service/store/response-histogram.ts';
import { openSqliteStore } from '../../src/service/store/sqlite/index.ts';
import type { Store } from '../../src/service/store/store.ts';
import type { RunResult } from '../../src/shared/protocol.ts';
import { tempDataDir } from '../helpers/public-api.ts';
import { createCheckForResults, storeRunResult } from '../support/results-in-store.ts';

const HOUR = 3_600_000;

describe('check statistics over 24 hours (store.checkStats)', () => {
  let dataDir: string;
  let store: Store;
  let accountId: string;
  let seq = 0;

  beforeEach(async () => {
    dataDir = tempDataDir();
    store = await openSqliteStore(dataDir);
    accountId = (await createAccount(store, 'Acme')).accountId;
  });
  afterEach(async () => {
    await store.close();
    rmSync(dataDir, { recursive: true, force: true });
  });

  async function newCheck(owner = accountId): Promise<string> {
    const check = await createCheckForResults(store, { accountId: owner, name: `check ${++seq}` });
    return check.id;
  }

  function store_(
    checkId: string,
    atMs: number,
    responseTime: number,
    outcome: Partial<RunResult> & { resultType?: 'FINAL' | 'ATTEMPT' } = {},
    owner = accountId,
  ) {
    const { resultType, ...payload } = outcome;
    return storeRunResult(store, {
      accountId: owner,
      checkId,
      runId: `run-${++seq}`,
      checkName: 'x',
      resultType,
      atMs,
      outcome: { responseTime, ...payload },
    });
  }

  it('counts runs, failures and errors, and gives the average and p50/p95/p99 within the histogram error', async () => {
    const now = Date.now();
    const id = await newCheck();
    // 1..100 ms, one each, spread over the last 20 hours; every tenth run failed or errored.
    for (let ms = 1; ms <= 100; ms++) {
      await store_(id, now - (ms % 20) * HOUR, ms, {
        hasFailures: ms % 10 === 0 && ms % 20 !== 0,
        hasErrors: ms % 20 === 0,
      });
    }
    const stats = (await store.checkStats.forChecks(accountId, [id], now)).get(id);
    expect(stats?.runs).toBe(100);
    expect(stats?.failures).toBe(10);
    expect(stats?.availability).toBe(90);
    expect(stats?.avgMs).toBe(51); // 50.5 rounded
    const close = (actual: number | null | undefined, exact: number) =>
      expect(Math.abs((actual ?? -1) - exact) / exact).toBeLessThanOrEqual(0.05);
    close(stats?.p50Ms, 50);
    close(stats?.p95Ms, 95);
    close(stats?.p99Ms, 99);
  });

  it('leaves out results older than the window, retried attempts and cancelled runs', async () => {
    const now = Date.now();
    const id = await newCheck();
    await store_(id, now - 30 * HOUR, 5000, { hasFailures: true });
    await store_(id, now - HOUR, 10, { hasFailures: true, resultType: 'ATTEMPT' });
    await store_(id, now - HOUR, 10, { isCancelled: true, hasErrors: true });
    await store_(id, now - HOUR, 10);
    expect((await store.checkStats.forChecks(accountId, [id], now)).get(id)).toMatchObject({
      runs: 1,
      failures: 0,
      availability: 100,
    });
    const idle = await newCheck();
    expect((await store.checkStats.forChecks(accountId, [idle], now)).has(idle)).toBe(false);
  });

  it('stores a result that has no response time, leaving it out of the figures', async () => {
    const now = Date.now();
    const id = await newCheck();
    expect((await store_(id, now - HOUR, Number.NaN)).status).toBe('stored');
    await store_(id, now - HOUR, 20);
    expect((await store.checkStats.forChecks(accountId, [id], now)).get(id)).toMatchObject({ runs: 1, avgMs: 20 });
  });

  it('keeps percentiles within the fastest and slowest run measured', async () => {
    const now = Date.now();
    const id = await newCheck();
    await store_(id, now - 1000, 900);
    expect((await store.checkStats.forChecks(accountId, [id], now)).get(id)).toMatchObject({
      p50Ms: 900,
      p95Ms: 900,
      p99Ms: 900,
    });
  });

  it('shows a newly stored result at once, even right after a read was cached', async () => {
    const now = Date.now();
    const id = await newCheck();
    await store_(id, now - 1000, 100);
    expect((await store.checkStats.forChecks(accountId, [id], now)).get(id)?.failures).toBe(0);
    await store_(id, now - 500, 300, { hasFailures: true });
    expect((await store.checkStats.forChecks(accountId, [id], now)).get(id)).toMatchObject({
      runs: 2,
      failures: 1,
      availability: 50,
    });
  });

  it("never gives one account's figures to another that names its check", async () => {
    const now = Date.now();
    const theirs = (await createAccount(store, 'Other')).accountId;
    const id = await newCheck(theirs);
    await store_(id, now - 1000, 100, {}, theirs);
    expect((await store.checkStats.forChecks(theirs, [id], now)).has(id)).toBe(true);
    expect((await store.checkStats.forChecks(accountId, [id], now)).has(id)).toBe(false);
  });

  it('puts response times in buckets whose percentiles stay within 5 %', () => {
    for (const ms of [2, 37, 180, 999, 4321, 60_000]) {
      const [p] = percentiles({ [String(bucketOf(ms))]: 1 }, 1, [50]);
      expect(Math.abs((p ?? 0) - ms) / ms, `${ms} ms`).toBeLessThanOrEqual(0.05);
    }
  });
});
