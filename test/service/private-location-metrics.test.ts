/**
 * GET /v1/private-locations/{id}/metrics on the composed service: the per-minute history the
 * sampler records, validated against the reference's privateLocationsMetricsHistoryResponseSchema,
 * the 15-day retention, and 400s that name the bad parameter.
 */
import { rmSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAccount } from '../../src/service/accounts.ts';
import { buildService, type Service } from '../../src/service/app.ts';
import { loadServiceConfig } from '../../src/service/config.ts';
import {
  LOCATION_METRICS_RETENTION_MS,
  LocationMetricsSampler,
  SAMPLE_EVERY_MS,
} from '../../src/service/metrics/location-sampler.ts';
import { ReferenceValidator } from '../contract/reference.ts';
import { silentLog } from '../helpers/dispatch-harness.ts';
import { tempDataDir } from '../helpers/public-api.ts';

const OPERATION = '/v1/private-locations/{id}/metrics';
const reference = new ReferenceValidator();
let service: Service;
let url: string;
let dataDir: string;
let headers: Record<string, string>;
let otherHeaders: Record<string, string>;
let locationId: string;
let sampler: LocationMetricsSampler;
/** The start of the current minute: samples are taken at minute boundaries. */
const minute = Math.floor(Date.now() / SAMPLE_EVERY_MS) * SAMPLE_EVERY_MS;
const unix = (ms: number) => String(Math.floor(ms / 1000));

async function account(name: string) {
  const { accountId, apiKey } = await createAccount(service.store, name);
  return { authorization: `Bearer ${apiKey}`, 'x-service-account': accountId, 'content-type': 'application/json' };
}

beforeAll(async () => {
  dataDir = tempDataDir();
  service = await buildService(loadServiceConfig({ DATA_DIR: dataDir, PORT: '0', HOST: '127.0.0.1' }), {
    logger: false,
  });
  url = await service.start();
  headers = await account('Acme');
  otherHeaders = await account('Other');
  const res = await fetch(`${url}/v1/private-locations`, {
    method: 'POST',
    headers,
    body: JSON.stringify({ name: 'Office', slugName: 'office' }),
  });
  locationId = ((await res.json()) as { id: string }).id;
  const check = await fetch(`${url}/v1/checks/api`, {
    method: 'POST',
    headers,
    body: JSON.stringify({
      name: 'Home',
      activated: false,
      privateLocations: ['office'],
      request: { method: 'GET', url: 'http://127.0.0.1:9/' },
    }),
  });
  const stored = await service.store.checks.get(
    headers['x-service-account'] as string,
    ((await check.json()) as { id: string }).id,
  );
  if (!stored) throw new Error('check missing');
  // One run waiting since 10 minutes before the current one.
  await service.dispatcher.enqueue(stored, locationId, minute - 10 * SAMPLE_EVERY_MS);
  sampler = new LocationMetricsSampler({
    runs: service.store.runs,
    samples: service.store.locationMetrics,
    log: silentLog,
  });
});
afterAll(async () => {
  await service.stop();
  rmSync(dataDir, { recursive: true, force: true });
});

async function get(query: string, h = headers, id = locationId) {
  const res = await fetch(`${url}/v1/private-locations/${id}/metrics${query}`, { headers: h });
  const body = await res.text();
  expect(reference.check('GET', OPERATION, res.status, body)).toBeNull();
  return { status: res.status, body: JSON.parse(body) as Record<string, unknown> };
}

describe('GET /v1/private-locations/{id}/metrics', () => {
  it('answers the sampled queue size and oldest queued age per minute, oldest first, in the reference shape', async () => {
    // Two minutes sampled (out of order): 3 and 2 minutes before the current minute.
    expect(await sampler.sample(new Date(minute - 2 * SAMPLE_EVERY_MS))).toBeGreaterThanOrEqual(1);
    expect(await sampler.sample(new Date(minute - 3 * SAMPLE_EVERY_MS))).toBeGreaterThanOrEqual(1);
    const res = await get(`?from=${unix(minute - 5 * SAMPLE_EVERY_MS)}&to=${unix(minute)}`);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      timestamps: [
        new Date(minute - 3 * SAMPLE_EVERY_MS).toISOString(),
        new Date(minute - 2 * SAMPLE_EVERY_MS).toISOString(),
      ],
      queueSize: [1, 1],
      oldestScheduledCheckRun: [7 * 60, 8 * 60],
    });
    // ISO 8601 bounds name the same window.
    const iso = await get(
      `?from=${new Date(minute - 5 * SAMPLE_EVERY_MS).toISOString()}&to=${new Date(minute).toISOString()}`,
    );
    expect(iso.body).toEqual(res.body);
    // A `to` far in the future (past year 9999) still ends the window after every sample.
    const far = await get(`?from=${unix(minute - 5 * SAMPLE_EVERY_MS)}&to=999999999999`);
    expect(far.body).toEqual(res.body);
  });

  it('keeps the first sample of a minute, as when several replicas sample it', async () => {
    const at = new Date(minute - 30 * SAMPLE_EVERY_MS);
    expect(await sampler.sample(at)).toBe(1);
    expect(await sampler.sample(new Date(at.getTime() + 30_000))).toBe(0);
    const res = await get(`?from=${unix(at.getTime())}&to=${unix(at.getTime())}`);
    expect(res.body.timestamps).toEqual([at.toISOString()]);
  });

  it('drops samples older than 15 days', async () => {
    const old = new Date(minute - LOCATION_METRICS_RETENTION_MS - 60 * SAMPLE_EVERY_MS);
    await sampler.sample(old);
    const oldIso = new Date(Math.floor(old.getTime() / SAMPLE_EVERY_MS) * SAMPLE_EVERY_MS).toISOString();
    expect(await service.store.locationMetrics.list(locationId, oldIso, oldIso)).toHaveLength(1);
    await sampler.sample(new Date(minute));
    expect(await service.store.locationMetrics.list(locationId, oldIso, oldIso)).toEqual([]);
  });

  it('answers 400 naming the parameter for a missing, malformed or out-of-range from/to', async () => {
    const now = Date.now();
    const cases: Array<[string, RegExp]> = [
      [`?to=${unix(now)}`, /querystring\/from is required/],
      [`?from=${unix(now - 60_000)}`, /querystring\/to is required/],
      [`?from=yesterday&to=${unix(now)}`, /querystring\/from must be a UNIX timestamp in seconds or an ISO 8601/],
      [`?from=${unix(now - 60_000)}&to=2026-13-45T99:00:00Z`, /querystring\/to must be a UNIX timestamp/],
      [`?from=${unix(now - 16 * 24 * 3600_000)}&to=${unix(now)}`, /querystring\/from must be less than 15 days ago/],
      [`?from=${unix(now)}&to=${unix(now - 60_000)}`, /querystring\/from must not be after querystring\/to/],
    ];
    for (const [query, message] of cases) {
      const res = await get(query);
      expect(res.status, query).toBe(400);
      expect(res.body, query).toMatchObject({
        statusCode: 400,
        error: 'Bad Request',
        message: expect.stringMatching(message),
      });
    }
  });

  it("answers 404 for another account's location and for an unknown one", async () => {
    const query = `?from=${unix(Date.now() - 60_000)}&to=${unix(Date.now())}`;
    expect((await get(query)).status).toBe(200);
    expect((await get(query, otherHeaders)).status).toBe(404);
    expect((await get(query, headers, '00000000-0000-4000-8000-000000000000')).status).toBe(404);
  });
});
