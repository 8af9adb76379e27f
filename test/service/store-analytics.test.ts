/**
 * The analytics reads of the store (store/repos/analytics.ts) on both backends: rollup rows per
 * location, outcome and status code with their measured metrics, one account's rows only, raw
 * results a page at a time filtered by outcome, and heartbeat events counted per hour.
 */
import { describe, expect, it } from 'vitest';
import { createAccount } from '../../src/service/accounts.ts';
import type { MetricSummaries } from '../../src/service/store/metric-summary.ts';
import {
  addJsonTo,
  addTo,
  DENSE_BUCKETS,
  densePercentiles,
  type Histogram,
  mergeInto,
  percentiles,
} from '../../src/service/store/response-histogram.ts';
import type { Store } from '../../src/service/store/store.ts';
import type { RunResult } from '../../src/shared/protocol.ts';
import { freshDatabaseEachTest } from '../support/fresh-account.ts';
import { accountWithCheck, createNightlyHeartbeat, storeRunResult } from '../support/results-in-store.ts';
import { storeBackends } from '../support/store-backends.ts';

const HOUR = 3_600_000;

describe.each(storeBackends())('analytics reads ($name)', (backend) => {
  const fresh = freshDatabaseEachTest(backend);

  const insert = (
    store: Store,
    c: { accountId: string; checkId: string },
    atMs: number,
    ms: number,
    failed: boolean,
    location: string,
  ) =>
    storeRunResult(store, {
      ...c,
      runLocation: location,
      attempts: failed ? 2 : 1,
      atMs,
      outcome: {
        responseTime: ms,
        hasFailures: failed,
        apiCheckResult: {
          response: {
            status: failed ? 503 : 200,
            timingPhases: { wait: 1, dns: ms / 10, tcp: 2, tls: 0, firstByte: 3, download: 4, total: ms },
          },
        } as RunResult['apiCheckResult'],
      },
    });

  it('keeps a rollup row per location, outcome and status, and reads results a page at a time', async () => {
    const store = await fresh.open();
    const acme = await accountWithCheck(store, 'Acme', 'Acme');
    const other = await accountWithCheck(store, 'Other', 'Other');
    const h = Math.floor(Date.now() / HOUR) - 2;
    await insert(store, acme, h * HOUR + 1000, 100, false, 'office');
    await insert(store, acme, h * HOUR + 2000, 300, false, 'office');
    await insert(store, acme, h * HOUR + 3000, 50, true, 'dc-2');
    await insert(store, other, h * HOUR + 4000, 70, false, 'office');

    const rows = await store.analytics.rollupsOfCheck(acme.accountId, acme.checkId, h, h + 1);
    const byKey = Object.fromEntries(rows.map((r) => [`${r.location}/${r.failed}/${r.statusCode}`, r]));
    expect(Object.keys(byKey).sort()).toEqual(['dc-2/true/503', 'office/false/200']);
    expect(byKey['office/false/200']).toMatchObject({
      runs: 2,
      failures: 0,
      totalMs: 400,
      minMs: 100,
      maxMs: 300,
      sqMs: 100_000,
      retries: 0,
    });
    expect(byKey['dc-2/true/503']).toMatchObject({ runs: 1, failures: 1, retries: 1 });
    const dns = (JSON.parse(byKey['office/false/200']?.metrics ?? '{}') as MetricSummaries).dns;
    expect(dns).toMatchObject({ n: 2, s: 40, q: 1000, mn: 10, mx: 30 });
    // Another account's check id names none of this account's rows, and the account's read is its own.
    expect(await store.analytics.rollupsOfCheck(other.accountId, acme.checkId, h, h + 1)).toEqual([]);
    expect((await store.analytics.rollupsOfAccount(acme.accountId, h, h + 1)).map((r) => r.checkId)).toEqual([
      acme.checkId,
      acme.checkId,
    ]);

    const window = { fromIso: new Date(h * HOUR).toISOString(), toIso: new Date((h + 1) * HOUR).toISOString() };
    const page = await store.analytics.rawResults(acme.accountId, acme.checkId, window, { limit: 2, offset: 0 });
    expect(page.map((r) => (JSON.parse(r.payload) as RunResult).responseTime)).toEqual([50, 300]);
    const passed = await store.analytics.rawResults(acme.accountId, acme.checkId, window, {
      limit: 10,
      offset: 0,
      failed: false,
    });
    expect(passed.map((r) => r.location)).toEqual(['office', 'office']);
    const failed = await store.analytics.rawResults(acme.accountId, acme.checkId, window, {
      limit: 10,
      offset: 0,
      failed: true,
    });
    expect(failed.map((r) => [r.location, r.attempts])).toEqual([['dc-2', 2]]);
  });

  it('counts heartbeat events per hour', async () => {
    const store = await fresh.open();
    const { accountId } = await createAccount(store, 'Acme');
    const start = (Math.floor(Date.now() / HOUR) - 3) * HOUR;
    const { check } = await createNightlyHeartbeat(store, accountId, 'token-1', start);
    await store.heartbeats.recordPing('token-1', { atMs: start + 1000, source: '127.0.0.1', userAgent: null });
    await store.heartbeats.recordPing('token-1', { atMs: start + 2000, source: '127.0.0.1', userAgent: null });
    await store.heartbeats.failOverdue(start + HOUR + 1000);
    const hours = await store.analytics.heartbeatHours(accountId, check.id, start, start + 3 * HOUR);
    expect(hours.reduce((n, x) => n + x.received, 0)).toBe(2);
    expect(hours.reduce((n, x) => n + x.failing, 0)).toBe(1);
    expect(hours.find((x) => x.received > 0)?.hour).toBe(start / HOUR);
  });
});

describe('dense histogram merge (reporting)', () => {
  it('reads stored histograms as JSON.parse and mergeInto would, percentiles included', () => {
    const sparse: Histogram = {};
    const dense = new Float64Array(DENSE_BUCKETS);
    let total = 0;
    for (let row = 0; row < 200; row++) {
      const h: Histogram = {};
      for (let i = 0; i < 1 + (row % 13); i++) addTo(h, 0.5 + ((row * 7919 + i * 104_729) % 90_000));
      mergeInto(sparse, h);
      addJsonTo(dense, JSON.stringify(h));
      total += 1 + (row % 13);
    }
    for (const [bucket, count] of Object.entries(sparse)) expect(dense[Number(bucket)]).toBe(count);
    expect(dense.reduce((a, b) => a + b, 0)).toBe(total);
    const wanted = [1, 50, 90, 95, 99, 100];
    expect(densePercentiles(dense, total, wanted)).toEqual(percentiles(sparse, total, wanted));
  });
});
