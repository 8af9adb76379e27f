import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { json, startTestApi, type TestAccount, type TestApi } from '../helpers/public-api.ts';
import { storeRunResult } from '../support/results-in-store.ts';

let api: TestApi;
let acme: TestAccount;
let checkId: string;
let locationId: string;

interface ResultList {
  length: number;
  entries: Array<Record<string, unknown>>;
  nextId: string | null;
}

beforeEach(async () => {
  api = await startTestApi();
  acme = await api.newAccount('Acme');
  const location = await api.app.inject({
    method: 'POST',
    url: '/v1/private-locations',
    headers: acme.headers,
    payload: { name: 'Office', slugName: 'office' },
  });
  locationId = json<{ id: string }>(location).id;
  const check = await api.app.inject({
    method: 'POST',
    url: '/v1/checks/api',
    headers: acme.headers,
    payload: { name: 'Home', privateLocations: ['office'], request: { method: 'GET', url: 'https://example.test/' } },
  });
  checkId = json<{ id: string }>(check).id;
});
afterEach(async () => {
  await api.close();
});

async function store(runId: string, responseTime = 10) {
  return storeRunResult(api.store, {
    accountId: acme.accountId,
    checkId,
    runId,
    checkName: 'Home',
    locationId,
    outcome: {
      startedAt: '2026-01-01T00:00:00.000Z',
      stoppedAt: '2026-01-01T00:00:00.100Z',
      responseTime,
      agent: { id: 'agent-1', version: '0.1.0' },
      scheduleLagMs: 3,
    },
  });
}

const list = async (query = '') =>
  api.app.inject({ method: 'GET', url: `/v2/check-results/${checkId}${query}`, headers: acme.headers });

describe('GET /v2/check-results/{checkId}', () => {
  it('returns entries in the reference CheckResult shape', async () => {
    const { id } = await store('run-1', 42);
    const res = await list();
    expect(res.statusCode).toBe(200);
    const body = json<ResultList>(res);
    expect(body).toEqual({
      length: 1,
      nextId: null,
      entries: [
        {
          id,
          name: 'Home',
          checkId,
          hasFailures: false,
          hasErrors: false,
          isDegraded: false,
          isCancelled: false,
          overMaxResponseTime: false,
          runLocation: 'office',
          startedAt: '2026-01-01T00:00:00.000Z',
          stoppedAt: '2026-01-01T00:00:00.100Z',
          created_at: expect.any(String),
          responseTime: 42,
          apiCheckResult: null,
          error: null,
          checkRunId: expect.any(Number),
          attempts: 1,
          resultType: 'FINAL',
          sequenceId: null,
          traceId: null,
        },
      ],
    });
  });

  it('pages newest first through nextId until it is null', async () => {
    for (let i = 1; i <= 5; i++) await store(`run-${i}`, i);
    const times: number[] = [];
    const runIds: number[] = [];
    let query = '?limit=2';
    for (let pages = 0; pages < 10; pages++) {
      const body = json<ResultList>(await list(query));
      expect(body.length).toBe(body.entries.length);
      times.push(...body.entries.map((e) => e.responseTime as number));
      runIds.push(...body.entries.map((e) => e.checkRunId as number));
      if (body.nextId === null) break;
      query = `?limit=2&nextId=${encodeURIComponent(body.nextId)}`;
    }
    expect(times).toEqual([5, 4, 3, 2, 1]);
    expect([...runIds].sort((a, b) => b - a)).toEqual(runIds);
    expect(new Set(runIds).size).toBe(5);
  });

  it('stores a retried upload once', async () => {
    const first = await store('run-1');
    expect(await store('run-1')).toEqual({ status: 'duplicate', id: first.id });
    expect(json<ResultList>(await list()).length).toBe(1);
  });

  it('answers 400 for a cursor it did not issue and for a limit out of range', async () => {
    const bad = await list('?nextId=not-a-cursor');
    expect(bad.statusCode).toBe(400);
    expect(json(bad).message).toMatch(/^querystring\/nextId/);
    const big = await list('?limit=101');
    expect(big.statusCode).toBe(400);
    expect(json(big).message).toBe('querystring/limit must be <= 100');
  });

  it('answers 404 for a check that does not exist', async () => {
    const res = await api.app.inject({ method: 'GET', url: '/v2/check-results/nope', headers: acme.headers });
    expect(res.statusCode).toBe(404);
  });
});

describe('GET /v1/check-results/{checkId}/{checkResultId}', () => {
  const one = (account: TestAccount, check: string, result: string) =>
    api.app.inject({ method: 'GET', url: `/v1/check-results/${check}/${result}`, headers: account.headers });

  it('returns the one result, as the list shows it', async () => {
    await store('run-1', 7);
    const { id } = await store('run-2', 42);
    const res = await one(acme, checkId, id);
    expect(res.statusCode, res.body).toBe(200);
    const listed = json<ResultList>(await list()).entries.find((e) => e.id === id);
    expect(json(res)).toEqual(listed);
    expect(json<{ responseTime: number }>(res).responseTime).toBe(42);
  });

  it("answers 404 for another account's result, a result of another check, and an unknown id", async () => {
    const { id } = await store('run-1');
    const other = await api.newAccount('Other');
    expect((await one(other, checkId, id)).statusCode).toBe(404);
    const second = await api.app.inject({
      method: 'POST',
      url: '/v1/checks/api',
      headers: acme.headers,
      payload: { name: 'Other', request: { method: 'GET', url: 'https://example.test/' } },
    });
    expect((await one(acme, json<{ id: string }>(second).id, id)).statusCode).toBe(404);
    const unknown = await one(acme, checkId, '00000000-0000-4000-8000-000000000000');
    expect(unknown.statusCode).toBe(404);
    expect(json(unknown).message).toBe('Check result not found');
  });
});
