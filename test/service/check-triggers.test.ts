/**
 * Check triggers: the token routes (`/v1/triggers/checks/{checkId}`) and the trigger URL
 * (`/checks/{checkId}/trigger/{token}`) on the composed service over loopback, with agents speaking
 * the agent API over HTTP; the trigger table at store level on SQLite and PostgreSQL (one per
 * check, resolved by its token only, gone with its check).
 */
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createAccount } from '../../src/service/accounts.ts';
import type { Store } from '../../src/service/store/store.ts';
import { AGENT_PATHS, type Job } from '../../src/shared/protocol.ts';
import { registrationBody, resultFor } from '../helpers/dispatch-harness.ts';
import { type RunningService, startRunningService } from '../helpers/running-service.ts';
import { seedTenant } from '../support/alerting-fixtures.ts';
import { freshDatabaseEachTest } from '../support/fresh-account.ts';
import { storeBackends } from '../support/store-backends.ts';

interface Reply<T = Record<string, unknown>> {
  status: number;
  body: T;
}

interface TriggerView {
  id: number;
  token: string;
  created_at: string;
  called_at: string | null;
  updated_at: string | null;
  checkId: string;
}

interface Triggered {
  checkId: string;
  runs: Array<{ runId: string; locationId: string }>;
}

type Headers = Record<string, string>;

const UNKNOWN_UUID = '00000000-0000-4000-8000-000000000000';

async function send<T>(url: string, method: string, headers: Headers = {}, body?: unknown): Promise<Reply<T>> {
  const res = await fetch(url, {
    method,
    headers: { ...headers, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const text = await res.text();
  return { status: res.status, body: (text === '' ? undefined : JSON.parse(text)) as T };
}

describe('check triggers on the service', () => {
  let svc: RunningService;
  let tenants = 0;

  beforeAll(async () => {
    svc = await startRunningService();
  });
  afterAll(async () => {
    await svc.stop();
  });

  const api = <T = Record<string, unknown>>(who: Headers, method: string, path: string, body?: unknown) =>
    send<T>(`${svc.baseUrl}${path}`, method, who, body);

  async function account(): Promise<Headers> {
    tenants += 1;
    const { accountId, apiKey } = await createAccount(svc.service.store, `Tenant ${tenants}`);
    return { authorization: `Bearer ${apiKey}`, 'x-service-account': accountId };
  }

  /** A private location (slug made unique) and the raw key of its agents. */
  async function location(who: Headers, name: string): Promise<{ id: string; slugName: string; key: string }> {
    const slugName = `${name}-${tenants}`;
    const res = await api<{ id: string; keys: Array<{ rawKey: string }> }>(who, 'POST', '/v1/private-locations', {
      name: slugName,
      slugName,
    });
    expect(res.status).toBe(201);
    return { id: res.body.id, slugName, key: res.body.keys[0]?.rawKey ?? '' };
  }

  /** An API check that runs once a day: after the run a new check gets at once, only triggers make runs. */
  async function apiCheck(who: Headers, slugs: string[], extra: Record<string, unknown> = {}): Promise<string> {
    const body = {
      name: 'Triggered',
      frequency: 1440,
      privateLocations: slugs,
      request: { method: 'GET', url: 'http://127.0.0.1:9/' },
      ...extra,
    };
    const res = await api<{ id: string }>(who, 'POST', '/v1/checks/api', body);
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    return res.body.id;
  }

  /** An agent of the location, over HTTP: registers, leases (long-polling), submits results. */
  async function agent(key: string) {
    const agentId = crypto.randomUUID();
    const post = <T>(path: string, body: unknown) =>
      send<T>(`${svc.baseUrl}${path}`, 'POST', { authorization: `Bearer ${key}` }, body);
    expect((await post(AGENT_PATHS.register, registrationBody(agentId))).status).toBe(200);
    return {
      async lease(waitSeconds: number): Promise<Job[]> {
        const res = await post<{ jobs: Job[] }>(AGENT_PATHS.lease, {
          agentId,
          slots: { uptime: 10, heavy: 0 },
          waitSeconds,
        });
        expect(res.status).toBe(200);
        return res.body.jobs;
      },
      async submit(job: Job, hasFailures = false): Promise<void> {
        const res = await post(AGENT_PATHS.results, {
          agentId,
          leaseId: job.leaseId,
          result: resultFor(job, agentId, { hasFailures, hasErrors: hasFailures }),
        });
        expect(res.status, JSON.stringify(res.body)).toBe(200);
      },
    };
  }
  type Agent = Awaited<ReturnType<typeof agent>>;

  /** Waits (the lease long-polls) for the one run a new check gets at once, and reports it. */
  async function finishFirstRun(a: Agent, checkId: string, hasFailures = false): Promise<void> {
    const [job] = await a.lease(20);
    expect(job?.check.id).toBe(checkId);
    await a.submit(job as Job, hasFailures);
  }

  const triggerUrl = (checkId: string, token: string) => `${svc.baseUrl}/checks/${checkId}/trigger/${token}`;

  it('creates the token once (201, then 200 with the same token), reads it, deletes it (204)', async () => {
    const who = await account();
    const loc = await location(who, 'office');
    const checkId = await apiCheck(who, [loc.slugName]);
    const url = `/v1/triggers/checks/${checkId}`;
    const none = await api<{ message: string }>(who, 'GET', url);
    expect(none.status).toBe(404);
    expect(none.body.message).toMatch(/no trigger/);

    const created = await api<TriggerView>(who, 'POST', url);
    expect(created.status).toBe(201);
    expect(created.body).toEqual({
      id: expect.any(Number),
      token: expect.stringMatching(/^[A-Za-z0-9_-]{43}$/),
      created_at: expect.any(String),
      called_at: null,
      updated_at: null,
      checkId,
    });
    expect(Date.parse(created.body.created_at)).not.toBeNaN();
    const again = await api<TriggerView>(who, 'POST', url);
    expect(again).toEqual({ status: 200, body: created.body });
    expect(await api(who, 'GET', url)).toEqual({ status: 200, body: created.body });

    expect((await api(who, 'DELETE', url)).status).toBe(204);
    expect((await api(who, 'GET', url)).status).toBe(404);
    expect((await api(who, 'DELETE', url)).status).toBe(404);
    // The old token is gone with it; a new trigger has a new token.
    expect((await send(triggerUrl(checkId, created.body.token), 'POST')).status).toBe(404);
    const fresh = await api<TriggerView>(who, 'POST', url);
    expect(fresh.status).toBe(201);
    expect(fresh.body.token).not.toBe(created.body.token);
  });

  it('the trigger URL, without an API key, runs the check at each of its locations; agents receive the runs; called_at is recorded', async () => {
    const who = await account();
    const office = await location(who, 'office');
    const lab = await location(who, 'lab');
    const checkId = await apiCheck(who, [office.slugName, lab.slugName]);
    const agents = { [office.id]: await agent(office.key), [lab.id]: await agent(lab.key) };
    for (const a of Object.values(agents)) await finishFirstRun(a, checkId);
    const { token } = (await api<TriggerView>(who, 'POST', `/v1/triggers/checks/${checkId}`)).body;

    for (const method of ['GET', 'POST']) {
      const res = await send<Triggered>(triggerUrl(checkId, token), method);
      expect(res.status, JSON.stringify(res.body)).toBe(200);
      expect(res.body.checkId).toBe(checkId);
      expect(res.body.runs.map((r) => r.locationId)).toEqual([office.id, lab.id]);
      for (const run of res.body.runs) {
        // Enqueued before the answer: the lease finds it at once.
        const jobs = await agents[run.locationId]!.lease(0);
        expect(jobs.map((j) => [j.runId, j.check.id])).toEqual([[run.runId, checkId]]);
        await agents[run.locationId]!.submit(jobs[0]!);
      }
    }
    const read = await api<TriggerView>(who, 'GET', `/v1/triggers/checks/${checkId}`);
    expect(Date.parse(read.body.called_at ?? '')).toBeGreaterThanOrEqual(Date.parse(read.body.created_at));
    const results = await api<{ entries: unknown[] }>(who, 'GET', `/v2/check-results/${checkId}?limit=100`);
    // The first run at each location, then two triggers at two locations.
    expect(results.body.entries).toHaveLength(6);
  });

  it('a wrong token and an unknown check are the same 404; a malformed check id is a 400', async () => {
    const who = await account();
    const loc = await location(who, 'office');
    const checkId = await apiCheck(who, [loc.slugName]);
    const { token } = (await api<TriggerView>(who, 'POST', `/v1/triggers/checks/${checkId}`)).body;
    const wrong = await send<{ message: string }>(triggerUrl(checkId, `${token}x`), 'POST');
    const unknown = await send<{ message: string }>(triggerUrl(UNKNOWN_UUID, token), 'POST');
    expect(wrong).toEqual({
      status: 404,
      body: { statusCode: 404, error: 'Not Found', message: 'No check trigger with this URL' },
    });
    expect(unknown).toEqual(wrong);
    const malformed = await send<{ message: string }>(triggerUrl('not-a-uuid', token), 'GET');
    expect(malformed.status).toBe(400);
    expect(malformed.body.message).toMatch(/params\/checkId/);
    // Neither call counts as a call of the trigger.
    expect((await api<TriggerView>(who, 'GET', `/v1/triggers/checks/${checkId}`)).body.called_at).toBeNull();
  });

  it("another account's check is a 404 on every token route; a malformed id a 400 naming the field; no key a 401", async () => {
    const who = await account();
    const loc = await location(who, 'office');
    const checkId = await apiCheck(who, [loc.slugName]);
    expect((await api(who, 'POST', `/v1/triggers/checks/${checkId}`)).status).toBe(201);
    const other = await account();
    for (const method of ['GET', 'POST', 'DELETE']) {
      const res = await api<{ message: string }>(other, method, `/v1/triggers/checks/${checkId}`);
      expect(res.status, method).toBe(404);
      expect(res.body.message).toBe('Check not found');
      const unknown = await api<{ message: string }>(who, method, `/v1/triggers/checks/${UNKNOWN_UUID}`);
      expect(unknown.status, method).toBe(404);
      const malformed = await api<{ message: string }>(who, method, '/v1/triggers/checks/12345');
      expect(malformed.status, method).toBe(400);
      expect(malformed.body.message).toMatch(/^params\/checkId/);
      expect((await send(`${svc.baseUrl}/v1/triggers/checks/${checkId}`, method)).status, method).toBe(401);
    }
    // Still there for its owner.
    expect((await api(who, 'GET', `/v1/triggers/checks/${checkId}`)).status).toBe(200);
  });

  it('a heartbeat check cannot have a trigger (400)', async () => {
    const who = await account();
    const hb = await api<{ id: string }>(who, 'POST', '/v1/checks/heartbeat', {
      name: 'Cron',
      heartbeat: { period: 1, periodUnit: 'hours', grace: 5, graceUnit: 'minutes' },
    });
    expect(hb.status).toBe(201);
    const res = await api<{ message: string }>(who, 'POST', `/v1/triggers/checks/${hb.body.id}`);
    expect(res.status).toBe(400);
    expect(res.body.message).toMatch(/^params\/checkId: a heartbeat check/);
  });

  it('a triggered run that fails is not retried, where a scheduled one of the same check is', async () => {
    const who = await account();
    const loc = await location(who, 'office');
    const retryStrategy = {
      type: 'FIXED',
      baseBackoffSeconds: 300,
      maxRetries: 2,
      maxDurationSeconds: 600,
      sameRegion: true,
    };
    const checkId = await apiCheck(who, [loc.slugName], { retryStrategy });
    const a = await agent(loc.key);
    await finishFirstRun(a, checkId, true);
    const types = async () =>
      (
        await api<{ entries: Array<{ resultType: string }> }>(
          who,
          'GET',
          `/v2/check-results/${checkId}?limit=100&resultType=ALL`,
        )
      ).body.entries.map((e) => e.resultType);
    // The scheduled run's failure is an ATTEMPT: a retry is planned (in 300 s).
    expect(await types()).toEqual(['ATTEMPT']);

    const { token } = (await api<TriggerView>(who, 'POST', `/v1/triggers/checks/${checkId}`)).body;
    const triggered = await send<Triggered>(triggerUrl(checkId, token), 'POST');
    const [job] = await a.lease(0);
    expect(job?.runId).toBe(triggered.body.runs[0]?.runId);
    await a.submit(job as Job, true);
    expect(await types()).toEqual(['FINAL', 'ATTEMPT']);
  });

  it('a deactivated check runs nothing when triggered', async () => {
    const who = await account();
    const loc = await location(who, 'office');
    const checkId = await apiCheck(who, [loc.slugName], { activated: false });
    const { token } = (await api<TriggerView>(who, 'POST', `/v1/triggers/checks/${checkId}`)).body;
    expect(await send<Triggered>(triggerUrl(checkId, token), 'POST')).toEqual({
      status: 200,
      body: { checkId, runs: [] },
    });
    const a = await agent(loc.key);
    expect(await a.lease(0)).toEqual([]);
  });

  it('deleting the check deletes its trigger: its URL is a 404', async () => {
    const who = await account();
    const loc = await location(who, 'office');
    const checkId = await apiCheck(who, [loc.slugName]);
    const { token } = (await api<TriggerView>(who, 'POST', `/v1/triggers/checks/${checkId}`)).body;
    expect((await api(who, 'DELETE', `/v1/checks/${checkId}`)).status).toBe(204);
    expect((await send(triggerUrl(checkId, token), 'POST')).status).toBe(404);
    expect((await api(who, 'GET', `/v1/triggers/checks/${checkId}`)).status).toBe(404);
  });
});

describe('check trigger URLs are rate limited', () => {
  let svc: RunningService;
  afterEach(async () => {
    await svc.stop();
  });

  it('per token, with the group trigger limits', async () => {
    svc = await startRunningService({ RATE_LIMIT_TRIGGER_PER_TOKEN: '2' });
    const url = (token: string) => `${svc.baseUrl}/checks/${UNKNOWN_UUID}/trigger/${token}`;
    expect((await send(url('token-a'), 'POST')).status).toBe(404);
    expect((await send(url('token-a'), 'GET')).status).toBe(404);
    const limited = await send<{ message: string }>(url('token-a'), 'POST');
    expect(limited.status).toBe(429);
    expect(limited.body.message).toMatch(/trigger token.*at most 2 requests per 60 s/);
    expect((await send(url('token-b'), 'POST')).status).toBe(404);
  });
});

describe.each(storeBackends())('check trigger tokens on $name', (backend) => {
  const fresh = freshDatabaseEachTest(backend);
  let store: Store;
  beforeEach(async () => {
    store = await fresh.open();
  });

  it('keeps one trigger per check: created once, resolved by its token only, deleted', async () => {
    const t = await seedTenant(store);
    expect(await store.checkTriggers.get(t.accountId, t.check.id)).toBeUndefined();
    const made = await store.checkTriggers.ensure(t.accountId, t.check.id);
    expect(made).toMatchObject({
      created: true,
      trigger: {
        checkId: t.check.id,
        calledAt: null,
        updatedAt: null,
        token: expect.stringMatching(/^[A-Za-z0-9_-]{43}$/),
      },
    });
    expect(await store.checkTriggers.ensure(t.accountId, t.check.id)).toEqual({
      trigger: made.trigger,
      created: false,
    });

    const now = '2026-11-28T09:00:00.000Z';
    expect(await store.checkTriggers.call(t.check.id, `${made.trigger.token}x`, now)).toBeUndefined();
    expect(await store.checkTriggers.call(UNKNOWN_UUID, made.trigger.token, now)).toBeUndefined();
    expect(await store.checkTriggers.call(t.check.id, made.trigger.token, now)).toEqual({ accountId: t.accountId });
    expect(await store.checkTriggers.get(t.accountId, t.check.id)).toEqual({ ...made.trigger, calledAt: now });

    const other = await seedTenant(store, 'Other');
    expect(await store.checkTriggers.get(other.accountId, t.check.id)).toBeUndefined();
    expect(await store.checkTriggers.delete(other.accountId, t.check.id)).toBe(false);
    expect(await store.checkTriggers.delete(t.accountId, t.check.id)).toBe(true);
    expect(await store.checkTriggers.get(t.accountId, t.check.id)).toBeUndefined();
  });

  it("deleting a check deletes its trigger (cascade), and no other check's", async () => {
    const t = await seedTenant(store);
    const other = await seedTenant(store, 'Other');
    const mine = await store.checkTriggers.ensure(t.accountId, t.check.id);
    const theirs = await store.checkTriggers.ensure(other.accountId, other.check.id);
    expect(await store.checks.delete(t.accountId, t.check.id)).toBeTruthy();
    expect(await fresh.query('SELECT check_id FROM check_triggers')).toEqual([{ check_id: other.check.id }]);
    expect(await store.checkTriggers.call(t.check.id, mine.trigger.token, new Date().toISOString())).toBeUndefined();
    expect(await store.checkTriggers.get(other.accountId, other.check.id)).toEqual(theirs.trigger);
  });

  it("two stores ensuring a check's trigger at the same time create one", async () => {
    const second = await fresh.open();
    const t = await seedTenant(store);
    const ensured = await Promise.all(
      [store, second, store, second].map((s) => s.checkTriggers.ensure(t.accountId, t.check.id)),
    );
    expect(ensured.filter((e) => e.created)).toHaveLength(1);
    expect(new Set(ensured.map((e) => e.trigger.token)).size).toBe(1);
  });
});
