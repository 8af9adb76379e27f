/**
 * GET /v1/reporting over results stored through the result repository (which fills the hourly
 * rollups): per-check success ratio, average, p95 and p99 over a window, the tag and activation
 * filters, calendar buckets in UTC and in a named time zone, and the 400s.
 */
import { describe, expect } from 'vitest';
import type { Store } from '../../src/service/store/store.ts';
import type { TestAccount, TestApi } from '../helpers/public-api.ts';
import { apiTest as it } from '../support/api-test.ts';
import { createCheckForResults, storeRunResult } from '../support/results-in-store.ts';

const HOUR = 3_600_000;

function createCheck(
  store: Store,
  account: TestAccount,
  checkType: 'API' | 'TCP' | 'DNS',
  tags: string[],
  activated = true,
) {
  return createCheckForResults(store, {
    accountId: account.accountId,
    checkType,
    name: `${checkType} check`,
    tags,
    activated,
  });
}

async function storeResult(
  store: Store,
  account: TestAccount,
  checkId: string,
  atMs: number,
  ms: number,
  failed = false,
) {
  await storeRunResult(store, {
    accountId: account.accountId,
    checkId,
    atMs,
    outcome: { responseTime: ms, hasFailures: failed },
  });
}

const report = async (api: TestApi, account: TestAccount, query = '') => {
  const res = await api.request(account, 'GET', `/v1/reporting${query}`);
  expect(res.statusCode, res.body).toBe(200);
  return res.json() as Array<Record<string, unknown> & { checkId: string }>;
};

describe('GET /v1/reporting', () => {
  /** Three checks of `acme`: API and TCP with results, DNS deactivated and without. */
  async function threeChecks(store: Store, acme: TestAccount) {
    const api = await createCheck(store, acme, 'API', ['prod']);
    const tcp = await createCheck(store, acme, 'TCP', ['prod', 'db']);
    const dns = await createCheck(store, acme, 'DNS', ['staging'], false);
    const start = Date.now() - 3 * HOUR;
    // API: 1..100 ms, every tenth failed; TCP: two runs; DNS: none.
    for (let i = 1; i <= 100; i++) await storeResult(store, acme, api.id, start + i * 60_000, i, i % 10 === 0);
    await storeResult(store, acme, tcp.id, start, 40);
    await storeResult(store, acme, tcp.id, start + 60_000, 60, true);
    return { api, tcp, dns };
  }

  it('reports each check of the account over the window', async ({ api, acme, other }) => {
    const { api: apiCheck, tcp, dns } = await threeChecks(api.store, acme);
    const rows = await report(api, acme);
    expect(rows.map((r) => r.checkId)).toEqual([apiCheck.id, tcp.id, dns.id]);
    const [a, t, d] = rows;
    expect(a).toMatchObject({ name: 'API check', checkType: 'API', deactivated: false, tags: ['prod'] });
    expect(a?.aggregate).toMatchObject({ successRatio: 90, avg: 50.5 });
    const { p95, p99 } = (a?.aggregate ?? {}) as { p95: number; p99: number };
    expect(Math.abs(p95 - 95)).toBeLessThanOrEqual(95 * 0.05);
    expect(Math.abs(p99 - 99)).toBeLessThanOrEqual(99 * 0.05);
    expect(t?.aggregate).toEqual({ successRatio: 50, avg: 50, p95: 60, p99: 60 });
    expect(d).toMatchObject({ deactivated: true, aggregate: { successRatio: 0, avg: 0, p95: 0, p99: 0 } });
    expect(a?.aggregates).toBeUndefined();
    // Another account sees none of them.
    expect(await report(api, other)).toEqual([]);
  });

  it('filters by tags (all of them) and by activation', async ({ api, acme }) => {
    const { api: apiCheck, tcp, dns } = await threeChecks(api.store, acme);
    const ids = async (query: string) => (await report(api, acme, query)).map((r) => r.checkId);
    expect(await ids('?filterByTags=prod')).toEqual([apiCheck.id, tcp.id]);
    expect(await ids('?filterByTags=prod&filterByTags=db')).toEqual([tcp.id]);
    expect(await ids('?deactivated=true')).toEqual([dns.id]);
    expect(await ids('?deactivated=false')).toEqual([apiCheck.id, tcp.id]);
  });

  it('quickRange and from/to choose the window', async ({ api, acme }) => {
    const check = await createCheck(api.store, acme, 'API', []);
    const now = Date.now();
    await storeResult(api.store, acme, check.id, now - 3 * 24 * HOUR, 100);
    await storeResult(api.store, acme, check.id, now - HOUR, 300);
    const avg = async (query: string) =>
      (((await report(api, acme, query))[0]?.aggregate ?? {}) as { avg?: number }).avg;
    expect(await avg('')).toBe(300);
    expect(await avg('?quickRange=last24Hrs')).toBe(300);
    expect(await avg('?quickRange=last7Days')).toBe(200);
    const from = Math.floor((now - 4 * 24 * HOUR) / 1000);
    const to = Math.floor((now - 2 * 24 * HOUR) / 1000);
    expect(await avg(`?from=${from}&to=${to}`)).toBe(100);
  });

  it('granularity gives calendar buckets, in UTC or a named time zone; empty buckets are left out', async ({
    api,
    acme,
  }) => {
    const check = await createCheck(api.store, acme, 'API', []);
    // 2026-01-10T03:00Z is still January 9 in New York (UTC-5), 06:00Z is January 10 there.
    await storeResult(api.store, acme, check.id, Date.parse('2026-01-10T03:00:00Z'), 10);
    await storeResult(api.store, acme, check.id, Date.parse('2026-01-10T06:30:00Z'), 30, true);
    const window = '?from=2026-01-08T12:00:00Z&to=2026-01-12T00:00:00Z&granularity=day';
    const [utc] = await report(api, acme, window);
    expect(utc?.aggregate).toBeUndefined();
    expect(utc?.aggregates).toEqual([
      { successRatio: 50, avg: 20, p95: 30, p99: 30, from: '2026-01-10T00:00:00.000Z', to: '2026-01-11T00:00:00.000Z' },
    ]);
    const [ny] = await report(api, acme, `${window}&timezone=America/New_York`);
    expect(ny?.aggregates).toEqual([
      {
        successRatio: 100,
        avg: 10,
        p95: 10,
        p99: 10,
        from: '2026-01-09T05:00:00.000Z',
        to: '2026-01-10T05:00:00.000Z',
      },
      { successRatio: 0, avg: 30, p95: 30, p99: 30, from: '2026-01-10T05:00:00.000Z', to: '2026-01-11T05:00:00.000Z' },
    ]);
    const [month] = await report(api, acme, '?from=2025-12-15T00:00:00Z&to=2026-02-10T00:00:00Z&granularity=month');
    expect(month?.aggregates).toEqual([
      { successRatio: 50, avg: 20, p95: 30, p99: 30, from: '2026-01-01T00:00:00.000Z', to: '2026-02-01T00:00:00.000Z' },
    ]);
    const [week] = await report(api, acme, '?from=2026-01-01T00:00:00Z&to=2026-01-20T00:00:00Z&granularity=week');
    // January 10, 2026 is a Saturday: its week starts on Monday the 5th.
    expect(week?.aggregates).toEqual([
      expect.objectContaining({ from: '2026-01-05T00:00:00.000Z', to: '2026-01-12T00:00:00.000Z' }),
    ]);
  });

  it('400 naming the parameter for bad input', async ({ api, acme }) => {
    const cases: Array<[string, RegExp]> = [
      ['?quickRange=last24Hours', /quickRange/],
      ['?granularity=hour', /granularity/],
      ['?granularity=day&timezone=%2B05:00', /timezone/],
      ['?granularity=day&timezone=Mars/Olympus_Mons', /timezone/],
      ['?granularity=day&from=2025-01-01T00:00:00Z&to=2025-07-01T00:00:00Z', /granularity/],
      ['?from=2025-01-01T00:00:00Z&to=2026-07-01T00:00:00Z', /from/],
      ['?from=tomorrow', /from/],
      ['?deactivated=maybe', /deactivated/],
    ];
    for (const [query, field] of cases) {
      const res = await api.request(acme, 'GET', `/v1/reporting${query}`);
      expect(res.statusCode, query).toBe(400);
      expect(res.json().message, query).toMatch(field);
    }
  });
});
