/**
 * Check statuses and alerts end to end: results submitted through the agent API to the dispatcher
 * (with retries carried out, as the service does), stored, and read back through the public API.
 */
import Fastify, { type FastifyInstance } from 'fastify';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { errorHandler, notFoundHandler } from '../../src/service/http/errors.ts';
import { publicApi } from '../../src/service/routes/index.ts';
import type { StoredCheck } from '../../src/service/store/store.ts';
import type { ApiCheckResult } from '../../src/shared/checks/types.ts';
import type { RunResult } from '../../src/shared/protocol.ts';
import { type Harness, startHarness, type TestAgent, type TestTenant } from '../helpers/dispatch-harness.ts';

let h: Harness;
let api: FastifyInstance;
let tenant: TestTenant;
let agent: TestAgent;

const failed: Partial<RunResult> = {
  hasFailures: true,
  responseTime: 40,
  error: 'status 500',
  apiCheckResult: { requestError: null, response: { status: 500 }, assertions: [] } as unknown as ApiCheckResult,
};
const passed: Partial<RunResult> = { responseTime: 7 };
/** The agent could not start the check (no sandbox): not the monitored service's fault. */
const infrastructureError: Partial<RunResult> = {
  hasErrors: true,
  responseTime: 0,
  error: 'the sandbox could not be started',
};

beforeEach(async () => {
  h = await startHarness({ retries: true });
  tenant = await h.tenant();
  agent = await h.agent(tenant);
  api = Fastify({ logger: false });
  api.setErrorHandler(errorHandler);
  api.setNotFoundHandler(notFoundHandler);
  await api.register(publicApi, { store: h.store, config: h.config, hooks: { async checkChanged() {} } });
  await api.ready();
});

afterEach(async () => {
  await api.close();
  await h.close();
});

const get = (url: string, who: TestTenant = tenant) => api.inject({ method: 'GET', url, headers: who.headers });

/** One scheduled run: enqueued now, leased and answered with `results` in turn (retries in between). */
async function runOnce(check: StoredCheck, ...results: Array<Partial<RunResult>>): Promise<void> {
  await h.dispatcher.enqueue(check, tenant.location.id, h.clock.now);
  for (const result of results) {
    // Past the retry's backoff, so the sweep enqueues it.
    await h.dispatcher.sweep();
    const [job] = await agent.lease();
    if (!job) throw new Error('no job to answer');
    expect((await agent.submit(job, result)).statusCode).toBe(200);
    h.clock.now += 10_000;
  }
  h.clock.now += 60_000;
}

async function alertTypes(checkId: string): Promise<string[]> {
  // The dispatcher's clock runs ahead of the real one: ask for the hours around it.
  const from = Math.floor(h.clock.now / 1000) - 3 * 3600;
  const res = await get(`/v1/check-alerts/${checkId}?from=${from}&to=${from + 6 * 3600}`);
  expect(res.statusCode).toBe(200);
  return (res.json() as Array<{ alertType: string }>).map((a) => a.alertType).reverse();
}

/** The tenant's check "Homepage" (of a closed port), escalating by its own `alertSettings`; `more` adds to its body. */
function homepageCheck(alertSettings: object, more: object = {}): Promise<StoredCheck> {
  return h.check(tenant, {
    body: {
      name: 'Homepage',
      request: { method: 'GET', url: 'http://127.0.0.1:9/' },
      alertSettings,
      useGlobalAlertSettings: false,
      ...more,
    },
  });
}

describe('check statuses and alerts through the dispatcher', () => {
  it('raises exactly one failure alert after failedRunThreshold failed runs and one recovery alert; ATTEMPTs and infrastructure errors count for nothing', async () => {
    const check = await homepageCheck(
      { escalationType: 'RUN_BASED', runBasedEscalation: { failedRunThreshold: 2 } },
      { retryStrategy: { type: 'FIXED', baseBackoffSeconds: 10, maxRetries: 1, sameRegion: true } },
    );
    // Run 1: a failed try (stored as ATTEMPT, retried) and its failed retry (FINAL): one failed run.
    await runOnce(check, failed, failed);
    const results = await h.store.results.list(tenant.accountId, check.id, { limit: 10, resultType: 'ALL' });
    expect(results.entries.map((r) => r.resultType)).toEqual(['FINAL', 'ATTEMPT']);
    expect(await alertTypes(check.id)).toEqual([]);

    // Run 2 fails too: the threshold is reached, one alert.
    await runOnce(check, failed, failed);
    expect(await alertTypes(check.id)).toEqual(['ALERT_FAILURE']);
    // Still failing, and an infrastructure error in between: no further alert.
    await runOnce(check, failed, failed);
    await runOnce(check, infrastructureError);
    expect(await alertTypes(check.id)).toEqual(['ALERT_FAILURE']);
    const failing = (await get(`/v1/check-statuses/${check.id}`)).json();
    expect(failing).toMatchObject({
      checkId: check.id,
      name: 'Homepage',
      hasFailures: true,
      hasErrors: true,
      lastRunLocation: tenant.location.slugName,
    });

    await runOnce(check, passed);
    expect(await alertTypes(check.id)).toEqual(['ALERT_FAILURE', 'ALERT_RECOVERY']);

    const status = await get(`/v1/check-statuses/${check.id}`);
    expect(status.statusCode).toBe(200);
    const last = (await h.store.results.list(tenant.accountId, check.id, { limit: 1 })).entries[0];
    expect(status.json()).toEqual({
      name: 'Homepage',
      checkId: check.id,
      hasFailures: false,
      hasErrors: false,
      isDegraded: false,
      longestRun: 40,
      shortestRun: 7,
      lastRunLocation: tenant.location.slugName,
      lastCheckRunId: last?.id,
      sslDaysRemaining: null,
      created_at: expect.any(String),
      updated_at: expect.any(String),
    });
    const from = Math.floor(h.clock.now / 1000) - 3 * 3600;
    const [failure] = (await get(`/v1/check-alerts/${check.id}?from=${from}&to=${from + 6 * 3600}`)).json().slice(-1);
    expect(failure).toMatchObject({
      checkId: check.id,
      name: 'Homepage',
      checkType: 'API',
      statusCode: '500',
      error: 'status 500',
      responseTime: 40,
    });
  });

  it('takes alertSettings on a check through the API, returns them, and escalates by them', async () => {
    const alertSettings = {
      escalationType: 'RUN_BASED',
      runBasedEscalation: { failedRunThreshold: 2 },
      reminders: { amount: 1, interval: 10 },
    };
    const body = {
      name: 'Homepage',
      privateLocations: [tenant.location.slugName],
      request: { method: 'GET', url: 'http://127.0.0.1:9/' },
    };
    const bad = await api.inject({
      method: 'POST',
      url: '/v1/checks/api',
      headers: tenant.headers,
      payload: { ...body, alertSettings: { runBasedEscalation: { failedRunThreshold: 7 } } },
    });
    expect(bad.statusCode).toBe(400);
    expect(bad.json().message).toMatch(/alertSettings\/runBasedEscalation\/failedRunThreshold/);
    const res = await api.inject({
      method: 'POST',
      url: '/v1/checks/api',
      headers: tenant.headers,
      payload: { ...body, alertSettings, useGlobalAlertSettings: false },
    });
    expect(res.statusCode, res.body).toBe(201);
    expect(res.json()).toMatchObject({ alertSettings, useGlobalAlertSettings: false });
    const check = await h.store.checks.get(tenant.accountId, res.json().id);
    if (!check) throw new Error('the check was not stored');
    await runOnce(check, failed);
    expect(await alertTypes(check.id)).toEqual([]);
    await runOnce(check, failed);
    expect(await alertTypes(check.id)).toEqual(['ALERT_FAILURE']);
  });

  it("TIME_BASED: alerts once the check has failed for minutesFailingThreshold by the dispatcher's clock", async () => {
    const check = await homepageCheck({
      escalationType: 'TIME_BASED',
      timeBasedEscalation: { minutesFailingThreshold: 5 },
    });
    // Each runOnce moves the clock 70 s on: the fifth failing result is 4 min 40 s after the first, the sixth 5 min 50 s.
    for (let minute = 0; minute < 5; minute++) await runOnce(check, failed);
    expect(await alertTypes(check.id)).toEqual([]);
    await runOnce(check, failed);
    expect(await alertTypes(check.id)).toEqual(['ALERT_FAILURE']);
  });

  it("a group's alert settings win over its check's", async () => {
    const group = await h.store.checkGroups.create(tenant.accountId, {
      name: 'g',
      activated: true,
      muted: false,
      concurrency: 3,
      locationIds: [],
      body: {
        name: 'g',
        alertSettings: { runBasedEscalation: { failedRunThreshold: 1 } },
        useGlobalAlertSettings: false,
      } as never,
    });
    const check = await homepageCheck({ runBasedEscalation: { failedRunThreshold: 5 } }, { groupId: group.id });
    await runOnce(check, failed);
    expect(await alertTypes(check.id)).toEqual(['ALERT_FAILURE']);
  });
});

describe('GET /v1/check-statuses and /v1/check-alerts', () => {
  it('lists statuses of the account only; another account reads 404 for the check', async () => {
    const check = await h.check(tenant);
    const fresh = await get(`/v1/check-statuses/${check.id}`);
    expect(fresh.json()).toMatchObject({
      checkId: check.id,
      hasFailures: false,
      lastCheckRunId: null,
      updated_at: null,
    });
    // Every check of the account is listed, one without results with its empty status.
    expect((await get('/v1/check-statuses')).json()).toEqual([fresh.json()]);
    await runOnce(check, passed);
    const [listed] = (await get('/v1/check-statuses')).json() as Array<{
      checkId: string;
      updated_at: string | null;
      shortestRun: number;
    }>;
    expect(listed).toMatchObject({ checkId: check.id, shortestRun: 7, updated_at: expect.any(String) });

    const other = await h.tenant('Other');
    expect((await get(`/v1/check-statuses/${check.id}`, other)).statusCode).toBe(404);
    expect((await get(`/v1/check-alerts/${check.id}`, other)).statusCode).toBe(404);
    expect((await get('/v1/check-statuses', other)).json()).toEqual([]);
  });

  it("a deleted check's status and alerts go with it", async () => {
    const check = await h.check(tenant);
    await runOnce(check, failed);
    expect(await alertTypes(check.id)).toEqual(['ALERT_FAILURE']);
    expect(await h.store.checks.delete(tenant.accountId, check.id)).toBe(true);
    expect(await h.store.checkStatuses.get(tenant.accountId, check.id)).toBeUndefined();
    expect((await get('/v1/check-statuses')).json()).toEqual([]);
    expect((await get(`/v1/check-statuses/${check.id}`)).statusCode).toBe(404);
    const from = Math.floor(h.clock.now / 1000) - 3 * 3600;
    expect((await get(`/v1/check-alerts?from=${from}&to=${from + 6 * 3600}`)).json()).toEqual([]);
  });

  it('pages alerts newest first and filters them by a window of UNIX seconds of at most 6 hours', async () => {
    const check = await h.check(tenant);
    const start = Math.floor(h.clock.now / 1000);
    for (let i = 0; i < 3; i++) {
      await runOnce(check, failed);
      await runOnce(check, passed);
    }
    const window = `from=${start}&to=${start + 3600}`;
    const all = (await get(`/v1/check-alerts?${window}&limit=100`)).json() as Array<{ id: string; alertType: string }>;
    expect(all.map((a) => a.alertType)).toEqual([
      'ALERT_RECOVERY',
      'ALERT_FAILURE',
      'ALERT_RECOVERY',
      'ALERT_FAILURE',
      'ALERT_RECOVERY',
      'ALERT_FAILURE',
    ]);
    const page2 = (await get(`/v1/check-alerts/${check.id}?${window}&limit=4&page=2`)).json() as Array<{ id: string }>;
    expect(page2.map((a) => a.id)).toEqual(all.slice(4).map((a) => a.id));
    // Alerts after the window's end, or before its start, are left out.
    expect((await get(`/v1/check-alerts?from=${start - 3600}&to=${start}`)).json()).toEqual([]);
    expect((await get(`/v1/check-alerts?from=${start + 60}&to=${start + 120}`)).json()).toHaveLength(1);

    const tooWide = await get(`/v1/check-alerts?from=${start}&to=${start + 6 * 3600 + 1}`);
    expect(tooWide.statusCode).toBe(400);
    expect(tooWide.json().message).toMatch(/from.*to.*6 hours/);
    expect((await get(`/v1/check-alerts?from=${start}&to=${start}`)).statusCode).toBe(400);
    expect((await get('/v1/check-alerts?from=yesterday')).statusCode).toBe(400);
  });
});
