/**
 * GET /v1/analytics/<type>/{id}, GET /v1/analytics/metrics and POST /v1/analytics/checks, against
 * results stored through the result repository's insert (the dispatcher's path: it fills the hourly
 * rollups in the same transaction). Every figure is checked against what the inserted results give:
 * averages, bounds and availability exactly, percentiles within the histogram's 4.5 %.
 */
import { describe, expect } from 'vitest';
import { ANALYTICS_KINDS, type AnalyticsKind } from '../../src/service/analytics/catalog.ts';
import { SERVED_CHECK_TYPES } from '../../src/service/routes/analytics.ts';
import type { Store, StoredCheck } from '../../src/service/store/store.ts';
import type { RunResult } from '../../src/shared/protocol.ts';
import type { TestAccount, TestApi } from '../helpers/public-api.ts';
import { apiTest as it } from '../support/api-test.ts';
import { createCheckForResults, createNightlyHeartbeat, storeRunResult } from '../support/results-in-store.ts';

const HOUR = 3_600_000;

interface Sample {
  atMs: number;
  ms: number;
  failed?: boolean;
  location?: string;
  status?: number;
  phases?: { dns: number; tcp: number };
  loss?: number;
  attempts?: number;
}

/** A result payload of `checkType` carrying what each type's metrics are read from. */
function payloadOf(checkType: string, s: Sample): RunResult {
  const phases = s.phases ?? { dns: 2, tcp: 3 };
  return {
    checkType,
    responseTime: s.ms,
    hasFailures: s.failed ?? false,
    hasErrors: false,
    isDegraded: false,
    isCancelled: false,
    apiCheckResult: {
      response: {
        status: s.status ?? 200,
        timingPhases: { wait: 1, dns: phases.dns, tcp: phases.tcp, tls: 0, firstByte: 4, download: 5, total: s.ms },
      },
    },
    details: {
      tcpCheckResult: { response: { timingPhases: { dns: phases.dns, connect: phases.tcp, data: 1, total: s.ms } } },
      icmpCheckResult: {
        response: { packetLoss: s.loss ?? 0, latency: { min: s.ms / 2, max: s.ms * 2, avg: s.ms, stdDev: 1 } },
      },
    },
  } as unknown as RunResult;
}

function createCheck(store: Store, account: TestAccount, checkType: string, tags: string[] = []) {
  return createCheckForResults(store, {
    accountId: account.accountId,
    checkType: checkType as StoredCheck['checkType'],
    name: `${checkType} check`,
    tags,
  });
}

async function storeResults(
  store: Store,
  account: TestAccount,
  check: { id: string; checkType: string },
  samples: readonly Sample[],
) {
  for (const s of samples) {
    await storeRunResult(store, {
      accountId: account.accountId,
      checkId: check.id,
      runLocation: s.location ?? 'office',
      attempts: s.attempts ?? 1,
      atMs: s.atMs,
      outcome: payloadOf(check.checkType, s),
    });
  }
}

/** The first row of the analytics of a new check of `checkType` that gave `samples`. */
async function firstRowOf(
  api: TestApi,
  account: TestAccount,
  checkType: string,
  path: string,
  metrics: string,
  samples: readonly Sample[],
) {
  const check = await createCheck(api.store, account, checkType);
  await storeResults(api.store, account, check, samples);
  return (await api.request(account, 'GET', `/v1/analytics/${path}/${check.id}?metrics=${metrics}`)).json().series[0]
    .data[0];
}

/** Exact nearest-rank percentile, what the histogram approximates. */
function exactPercentile(values: readonly number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.max(1, Math.ceil((p / 100) * sorted.length)) - 1] ?? 0;
}

const within = (actual: unknown, expected: number, relative = 0.05) => {
  expect(typeof actual).toBe('number');
  expect(Math.abs((actual as number) - expected)).toBeLessThanOrEqual(Math.max(1, expected * relative));
};

/** Forty results over the last hours: two locations, response times 10..400 ms, every fifth one failed. */
function samplesOver(nowMs: number): Sample[] {
  const start = Math.floor(nowMs / HOUR) * HOUR - 3 * HOUR;
  return Array.from({ length: 40 }, (_, i) => ({
    atMs: start + i * 4 * 60_000,
    ms: 10 * (i + 1),
    failed: i % 5 === 0,
    location: i % 2 === 0 ? 'office' : 'dc-2',
    status: i % 5 === 0 ? 500 : 200,
    phases: { dns: i + 1, tcp: 2 * (i + 1) },
    loss: i % 4 === 0 ? 25 : 0,
    attempts: i % 10 === 0 ? 2 : 1,
  }));
}

const timedMetric = (kind: AnalyticsKind) => kind.metrics.find((m) => m.source === 'responseTime')?.name;

describe('GET /v1/analytics/<type>/{id}', () => {
  const kinds = ANALYTICS_KINDS.filter((k) => SERVED_CHECK_TYPES.includes(k.checkType) && k.checkType !== 'HEARTBEAT');

  it.for(kinds.map((k) => [k.path, k] as const))(
    '%s: availability, response time and percentiles match the stored results',
    async ([_path, kind], { api, acme }) => {
      const check = await createCheck(api.store, acme, kind.checkType, ['prod']);
      const samples = samplesOver(Date.now());
      await storeResults(api.store, acme, check, samples);
      const timed = timedMetric(kind);
      const aggs = ['avg', 'min', 'max', 'p50', 'p90', 'p95', 'p99', 'sum', 'median', 'stddev'];
      const metrics = ['availability', 'retries', ...(timed ? aggs.map((a) => `${timed}_${a}`) : [])];
      const res = await api.request(acme, 'GET', `/v1/analytics/${kind.path}/${check.id}?metrics=${metrics.join(',')}`);
      expect(res.statusCode, res.body).toBe(200);
      const body = res.json();
      expect(body).toMatchObject({
        checkId: check.id,
        checkType: kind.checkType,
        activated: true,
        muted: false,
        frequency: 1,
        tags: ['prod'],
      });
      expect(body.pagination).toEqual({ page: 1, limit: 10 });
      expect(body.series).toHaveLength(1);
      const [row] = body.series[0].data;
      expect(row.availability).toBe(80);
      expect(row.retries).toBe(4);
      expect(body.metadata.availability).toEqual({ unit: 'percentage', label: 'Availability' });
      if (!timed) return;
      const times = samples.map((s) => s.ms);
      const mean = times.reduce((a, b) => a + b, 0) / times.length;
      expect(row[`${timed}_avg`]).toBeCloseTo(mean, 3);
      expect(row[`${timed}_sum`]).toBe(times.reduce((a, b) => a + b, 0));
      expect(row[`${timed}_min`]).toBe(10);
      expect(row[`${timed}_max`]).toBe(400);
      expect(row[`${timed}_stddev`]).toBeCloseTo(
        Math.sqrt(times.reduce((a, t) => a + (t - mean) ** 2, 0) / times.length),
        2,
      );
      for (const p of [50, 90, 95, 99]) within(row[`${timed}_p${p}`], exactPercentile(times, p));
      expect(row[`${timed}_median`]).toBe(row[`${timed}_p50`]);
      expect(body.metadata[`${timed}_p95`]).toMatchObject({ unit: 'milliseconds', aggregation: 'p95' });
    },
  );

  it('API checks: timing phases, grouped by location and by status code, filtered by status', async ({ api, acme }) => {
    const check = await createCheck(api.store, acme, 'API');
    const samples = samplesOver(Date.now());
    await storeResults(api.store, acme, check, samples);
    const base = `/v1/analytics/api-checks/${check.id}`;
    const phases = await api.request(acme, 'GET', `${base}?metrics=dns_avg,tcp_max,tcp_p95,firstByte_avg`);
    const [row] = phases.json().series[0].data;
    expect(row.dns_avg).toBeCloseTo(20.5, 3);
    expect(row.tcp_max).toBe(80);
    within(
      row.tcp_p95,
      exactPercentile(
        samples.map((s) => s.phases?.tcp ?? 0),
        95,
      ),
    );
    expect(row.firstByte_avg).toBe(4);

    const byLocation = (
      await api.request(acme, 'GET', `${base}?metrics=availability,responseTime_avg&groupBy=runLocation`)
    ).json();
    expect(byLocation.series.map((s: { runLocation: string }) => s.runLocation)).toEqual(['dc-2', 'office']);
    for (const entry of byLocation.series) {
      const mine = samples.filter((s) => s.location === entry.runLocation);
      expect(entry.data[0].availability).toBeCloseTo((mine.filter((s) => !s.failed).length / mine.length) * 100, 3);
      expect(entry.data[0].responseTime_avg).toBeCloseTo(mine.reduce((a, s) => a + s.ms, 0) / mine.length, 3);
    }

    const byStatus = (await api.request(acme, 'GET', `${base}?metrics=availability&groupBy=statusCode`)).json();
    expect(byStatus.series).toEqual([
      { statusCode: 200, data: [{ statusCode: 200, availability: 100 }] },
      { statusCode: 500, data: [{ statusCode: 500, availability: 0 }] },
    ]);

    const failures = (
      await api.request(acme, 'GET', `${base}?metrics=responseTime_min,availability&filterByStatus=failure`)
    ).json();
    expect(failures.series[0].data[0]).toEqual({ responseTime_min: 10, availability: 0 });
    const successes = (
      await api.request(acme, 'GET', `${base}?metrics=responseTime_min&filterByStatus=success`)
    ).json();
    expect(successes.series[0].data[0].responseTime_min).toBe(20);
  });

  it('TCP and ICMP: their own measurements', async ({ api, acme }) => {
    const samples = samplesOver(Date.now());
    const tcpRow = await firstRowOf(
      api,
      acme,
      'TCP',
      'tcp-checks',
      'total_avg,connection_max,dns_min,data_sum',
      samples,
    );
    expect(tcpRow).toEqual({ total_avg: 205, connection_max: 80, dns_min: 1, data_sum: 40 });
    const icmpRow = await firstRowOf(
      api,
      acme,
      'ICMP',
      'icmp',
      'packetLoss_avg,packetLoss_max,latencyAvg_avg,latencyMax_max,latencyMin_min',
      samples,
    );
    expect(icmpRow).toEqual({
      packetLoss_avg: 6.25,
      packetLoss_max: 25,
      latencyAvg_avg: 205,
      latencyMax_max: 800,
      latencyMin_min: 5,
    });
  });

  it('aggregationInterval splits the window into rows of whole hours; from/to in UNIX seconds or ISO', async ({
    api,
    acme,
  }) => {
    const check = await createCheck(api.store, acme, 'DNS');
    const h0 = Math.floor(Date.now() / HOUR) * HOUR - 5 * HOUR;
    await storeResults(api.store, acme, check, [
      { atMs: h0 + 60_000, ms: 10 },
      { atMs: h0 + 120_000, ms: 30, failed: true },
      { atMs: h0 + HOUR + 60_000, ms: 50 },
      { atMs: h0 + 2 * HOUR + 60_000, ms: 70 },
    ]);
    const from = h0 / 1000;
    const to = (h0 + 3 * HOUR) / 1000;
    const hourly = (
      await api.request(
        acme,
        'GET',
        `/v1/analytics/dns/${check.id}?metrics=total_avg,availability&aggregationInterval=60&from=${from}&to=${to}`,
      )
    ).json();
    expect(hourly.from).toBe(new Date(h0).toISOString());
    expect(hourly.series[0].data).toEqual([
      { timestamp: new Date(h0).toISOString(), total_avg: 20, availability: 50 },
      { timestamp: new Date(h0 + HOUR).toISOString(), total_avg: 50, availability: 100 },
      { timestamp: new Date(h0 + 2 * HOUR).toISOString(), total_avg: 70, availability: 100 },
    ]);
    // 90 minutes is read as two hours; an ISO `to`.
    const iso = new Date(h0 + 3 * HOUR).toISOString();
    const twoHourly = (
      await api.request(
        acme,
        'GET',
        `/v1/analytics/dns/${check.id}?metrics=total_avg&aggregationInterval=90&from=${from}&to=${iso}`,
      )
    ).json();
    expect(twoHourly.series[0].data).toEqual([
      { timestamp: new Date(h0).toISOString(), total_avg: 30 },
      { timestamp: new Date(h0 + 2 * HOUR).toISOString(), total_avg: 70 },
    ]);
    const empty = (
      await api.request(
        acme,
        'GET',
        `/v1/analytics/dns/${check.id}?metrics=total_avg,availability&from=${from - 86_400}&to=${from}`,
      )
    ).json();
    expect(empty.series[0].data).toEqual([{ total_avg: null, availability: null }]);
  });

  it('quickRange presets: last24Hours leaves out what last7Days has', async ({ api, acme }) => {
    const check = await createCheck(api.store, acme, 'MULTI_STEP');
    const now = Date.now();
    await storeResults(api.store, acme, check, [
      { atMs: now - 3 * 24 * HOUR, ms: 100 },
      { atMs: now - HOUR, ms: 300 },
    ]);
    const url = (range: string) =>
      `/v1/analytics/multistep-checks/${check.id}?metrics=responseTime_avg&quickRange=${range}`;
    expect((await api.request(acme, 'GET', url('last24Hours'))).json().series[0].data[0].responseTime_avg).toBe(300);
    expect((await api.request(acme, 'GET', url('last7Days'))).json().series[0].data[0].responseTime_avg).toBe(200);
    const lastMonth = (await api.request(acme, 'GET', url('lastMonth'))).json();
    const n = new Date(now);
    expect(lastMonth.to).toBe(new Date(Date.UTC(n.getUTCFullYear(), n.getUTCMonth(), 1)).toISOString());
    expect(lastMonth.from).toBe(new Date(Date.UTC(n.getUTCFullYear(), n.getUTCMonth() - 1, 1)).toISOString());
  });

  it('metrics without an aggregation give raw data points, a page at a time', async ({ api, acme }) => {
    const check = await createCheck(api.store, acme, 'API');
    const start = Date.now() - 2 * HOUR;
    await storeResults(
      api.store,
      acme,
      check,
      [10, 20, 30].map((ms, i) => ({ atMs: start + i * 60_000, ms, phases: { dns: ms / 10, tcp: 1 } })),
    );
    const page1 = (
      await api.request(
        acme,
        'GET',
        `/v1/analytics/api-checks/${check.id}?metrics=responseTime,dns,availability&limit=2`,
      )
    ).json();
    expect(page1.series[0].data).toEqual([
      {
        timestamp: new Date(start + 120_000).toISOString(),
        runLocation: 'office',
        statusCode: 200,
        responseTime: 30,
        dns: 3,
        availability: 100,
      },
      {
        timestamp: new Date(start + 60_000).toISOString(),
        runLocation: 'office',
        statusCode: 200,
        responseTime: 20,
        dns: 2,
        availability: 100,
      },
    ]);
    const page2 = (
      await api.request(acme, 'GET', `/v1/analytics/api-checks/${check.id}?metrics=responseTime&limit=2&page=2`)
    ).json();
    expect(page2.series[0].data.map((r: { responseTime: number }) => r.responseTime)).toEqual([10]);
    expect(page2.pagination).toEqual({ page: 2, limit: 2 });
  });

  it('heartbeat checks: availability from pings and missed deadlines', async ({ api, acme }) => {
    const now = Date.now() - 2 * HOUR;
    const token = crypto.randomUUID();
    const { check } = await createNightlyHeartbeat(api.store, acme.accountId, token, now);
    await api.store.heartbeats.recordPing(token, { atMs: now + 1000, source: '127.0.0.1', userAgent: null });
    await api.store.heartbeats.failOverdue(now + 10 * 60_000);
    const res = await api.request(acme, 'GET', `/v1/analytics/heartbeat-checks/${check.id}?metrics=availability`);
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json().series[0].data[0].availability).toBe(50);
    // The reference gives heartbeats no aggregationInterval or groupBy.
    expect(
      (await api.request(acme, 'GET', `/v1/analytics/heartbeat-checks/${check.id}?metrics=responseTime_avg`))
        .statusCode,
    ).toBe(400);
  });

  it('400 naming the parameter for bad input', async ({ api, acme }) => {
    const check = await createCheck(api.store, acme, 'DNS');
    const base = `/v1/analytics/dns/${check.id}`;
    const cases: Array<[string, RegExp]> = [
      [base, /metrics/],
      [`${base}?metrics=nope_avg`, /metrics/],
      [`${base}?metrics=total_p42`, /metrics/],
      [`${base}?metrics=total,total_avg`, /metrics/],
      [`${base}?metrics=total_avg&quickRange=yesterday`, /quickRange/],
      [`${base}?metrics=total_avg&aggregationInterval=0`, /aggregationInterval/],
      [`${base}?metrics=total_avg&aggregationInterval=43201`, /aggregationInterval/],
      [`${base}?metrics=total_avg&groupBy=statusCode`, /groupBy/],
      [`${base}?metrics=total_avg&filterByStatus=maybe`, /filterByStatus/],
      [`${base}?metrics=total_avg&from=yesterday`, /from/],
      [`${base}?metrics=total_avg&from=2000&to=1000`, /from/],
      [`${base}?metrics=total_avg&limit=101`, /limit/],
      [`${base}?metrics=total_avg&page=0`, /page/],
    ];
    for (const [url, field] of cases) {
      const res = await api.request(acme, 'GET', url);
      expect(res.statusCode, url).toBe(400);
      expect(res.json().message, url).toMatch(field);
    }
    const browser = await createCheck(api.store, acme, 'BROWSER');
    expect(
      (
        await api.request(acme, 'GET', `/v1/analytics/browser-checks/${browser.id}?metrics=TTFB_avg&groupBy=pageIndex`)
      ).json().message,
    ).toMatch(/groupBy/);
  });

  it("another account's check, and a check of another type, are not found", async ({ api, acme, other }) => {
    const check = await createCheck(api.store, acme, 'API');
    await storeResults(api.store, acme, check, samplesOver(Date.now()));
    expect(
      (await api.request(other, 'GET', `/v1/analytics/api-checks/${check.id}?metrics=availability`)).statusCode,
    ).toBe(404);
    expect(
      (await api.request(acme, 'GET', `/v1/analytics/tcp-checks/${check.id}?metrics=availability`)).statusCode,
    ).toBe(404);
    const batch = await api.request(other, 'POST', '/v1/analytics/checks', { checkIds: [check.id] });
    expect(batch.json()).toEqual([]);
  });
});

describe('GET /v1/analytics/metrics and POST /v1/analytics/checks', () => {
  it('lists every metric of a type, raw and aggregated', async ({ api, acme }) => {
    const res = await api.request(acme, 'GET', '/v1/analytics/metrics?checkType=API');
    const names = res.json().map((m: { name: string }) => m.name);
    expect(names).toEqual(
      expect.arrayContaining([
        'responseTime',
        'responseTime_p99',
        'dns_p95',
        'download_stddev',
        'availability',
        'retries',
      ]),
    );
    expect(res.json().find((m: { name: string }) => m.name === 'dns_p95')).toEqual({
      name: 'dns_p95',
      unit: 'milliseconds',
      label: 'DNS lookup',
      type: 'Float',
      aggregated: true,
    });
    expect((await api.request(acme, 'GET', '/v1/analytics/metrics?checkType=GRPC')).json()).toEqual([]);
    const bad = await api.request(acme, 'GET', '/v1/analytics/metrics?checkType=FTP');
    expect(bad.statusCode).toBe(400);
    expect(bad.json().message).toMatch(/checkType/);
  });

  it('summarises several checks, each with the fields of its type', async ({ api, acme }) => {
    const samples = samplesOver(Date.now());
    const apiCheck = await createCheck(api.store, acme, 'API');
    const icmp = await createCheck(api.store, acme, 'ICMP');
    const idle = await createCheck(api.store, acme, 'TCP');
    await storeResults(api.store, acme, apiCheck, samples);
    await storeResults(api.store, acme, icmp, samples);
    const res = await api.request(acme, 'POST', '/v1/analytics/checks?quickRange=last7Days', {
      checkIds: [apiCheck.id, icmp.id, idle.id],
    });
    expect(res.statusCode, res.body).toBe(200);
    const [a, i, t] = res.json();
    expect(a).toMatchObject({ checkId: apiCheck.id, checkType: 'API', availability: 80, responseTime_avg: 205 });
    within(
      a.responseTime_p95,
      exactPercentile(
        samples.map((s) => s.ms),
        95,
      ),
    );
    expect(a.latency_avg).toBeUndefined();
    expect(i).toMatchObject({ checkId: icmp.id, checkType: 'ICMP', latency_avg: 205, packetLoss_avg: 6.25 });
    expect(t).toEqual({
      checkId: idle.id,
      checkType: 'TCP',
      availability: null,
      responseTime_avg: null,
      responseTime_p50: null,
      responseTime_p95: null,
      responseTime_p99: null,
    });
    const bad = await api.request(acme, 'POST', '/v1/analytics/checks', { checkIds: [] });
    expect(bad.statusCode).toBe(400);
    expect(bad.json().message).toMatch(/checkIds/);
  });
});
