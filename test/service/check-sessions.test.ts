/**
 * Check sessions on the composed service (buildService on loopback), with the test speaking the
 * agent protocol over HTTP: trigger by each target filter, the 400s and the 404 of the reference,
 * GET, completion (verdicts, the 408 of a timeout, the wake-up on a result), cancel, another
 * account's session, the claim order against scheduled runs, and a session's failure moving the check's status.
 *
 * Checks are created in the store, not through the API, so the scheduler does not know them and
 * makes no run of its own: every run in a test is one the test asked for.
 */
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { CheckSessions } from '../../src/service/dispatch/check-sessions.ts';
import { SessionWaiters } from '../../src/service/dispatch/session-waiters.ts';
import type { StoredCheck } from '../../src/service/store/store.ts';
import { AGENT_PATHS, type Job, type RunResult } from '../../src/shared/protocol.ts';
import {
  createTenant,
  type Harness,
  registrationBody,
  resultFor,
  startHarness,
  type TestTenant as Tenant,
} from '../helpers/dispatch-harness.ts';
import { type RunningService, startRunningService } from '../helpers/running-service.ts';
import { addCheck } from '../support/fresh-account.ts';
import { type FreshStore, storeBackends } from '../support/store-backends.ts';

let svc: RunningService;
beforeAll(async () => {
  svc = await startRunningService({ PUBLIC_URL: 'https://outpost.example.com' });
});
afterAll(() => svc.stop());

interface SessionView {
  checkSessionId: string;
  checkSessionLink: string;
  checkId: string;
  checkType: string;
  name: string;
  status: string;
  startedAt: string;
  stoppedAt: string | null;
  timeElapsed: number;
  runLocations: string[];
  runSource: string | null;
  results?: Array<Record<string, unknown>>;
}

let tenants = 0;
function tenant(): Promise<Tenant> {
  tenants += 1;
  return createTenant(svc.service.store, `Tenant ${tenants}`, tenants);
}

async function check(t: Tenant, overrides: Partial<StoredCheck> & { tags?: string[] } = {}): Promise<StoredCheck> {
  const { tags = [], ...rest } = overrides;
  const name = rest.name ?? 'Homepage';
  const body = { tags, request: { method: 'GET', url: 'http://127.0.0.1:9/' } };
  return addCheck(svc.service.store, t.accountId, t.location.id, name, body, { frequency: 10, ...rest });
}

async function api(t: Tenant, method: 'GET' | 'POST', path: string, body?: unknown) {
  const res = await fetch(`${svc.baseUrl}${path}`, {
    method,
    headers: { ...t.headers, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const text = await res.text();
  return {
    status: res.status,
    headers: res.headers,
    body: (text ? JSON.parse(text) : null) as Record<string, unknown>,
  };
}

const trigger = (t: Tenant, body: unknown, version = 'v2') =>
  api(t, 'POST', `/${version}/check-sessions/trigger`, body);
const sessionsOf = (res: { body: Record<string, unknown> }) => res.body.sessions as SessionView[];

/** An agent of the tenant's location speaking the agent protocol over HTTP. */
async function agent(t: Tenant) {
  const agentId = crypto.randomUUID();
  const post = async (path: string, body: unknown) => {
    const res = await fetch(`${svc.baseUrl}${path}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${t.key}`, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    if (res.status !== 200) throw new Error(`${path}: ${res.status} ${await res.text()}`);
    return res.json() as Promise<Record<string, unknown>>;
  };
  await post(AGENT_PATHS.register, registrationBody(agentId));
  return {
    async lease(uptime = 10, waitSeconds = 0): Promise<Job[]> {
      return (await post(AGENT_PATHS.lease, { agentId, slots: { uptime, heavy: 0 }, waitSeconds })).jobs as Job[];
    },
    submit: (job: Job, overrides: Partial<RunResult> = {}) =>
      post(AGENT_PATHS.results, { agentId, leaseId: job.leaseId, result: resultFor(job, agentId, overrides) }),
  };
}

let acme: Tenant;
beforeEach(async () => {
  acme = await tenant();
});

describe('POST /v2/check-sessions/trigger', () => {
  it('starts one session per check named by checkId, at each of its locations', async () => {
    const second = await svc.service.store.locations.create(acme.accountId, {
      name: 'Lab',
      slugName: `lab-${tenants}`,
      icon: 'location',
      proxyUrl: null,
    });
    const a = await check(acme, { name: 'A', locationIds: [acme.location.id, second.id] });
    await check(acme, { name: 'B' });
    const res = await trigger(acme, { target: { checkId: [a.id] } });
    expect(res.status).toBe(201);
    const [session, ...others] = sessionsOf(res);
    expect(others).toEqual([]);
    expect(session).toMatchObject({
      checkId: a.id,
      checkType: 'API',
      name: 'A',
      status: 'STARTED',
      stoppedAt: null,
      runSource: 'TRIGGER_API',
    });
    expect(session?.runLocations.sort()).toEqual([acme.location.slugName, second.slugName].sort());
    expect(session?.checkSessionLink).toBe(`https://outpost.example.com/v2/check-sessions/${session?.checkSessionId}`);
  });

  it('selects by matchTags: OR of AND groups, `!tag` excluding', async () => {
    const prod = await check(acme, { name: 'prod', tags: ['production'] });
    const prodSkip = await check(acme, { name: 'prod-skip', tags: ['production', 'skip-e2e'] });
    const staging = await check(acme, { name: 'staging', tags: ['staging', 'api'] });
    await check(acme, { name: 'untagged' });
    const ids = async (matchTags: string[][]) =>
      sessionsOf(await trigger(acme, { target: { matchTags } }))
        .map((s) => s.checkId)
        .sort();
    expect(await ids([['production', '!skip-e2e']])).toEqual([prod.id]);
    expect(
      await ids([
        ['production', '!skip-e2e'],
        ['staging', 'api'],
      ]),
    ).toEqual([prod.id, staging.id].sort());
    expect(await ids([['production']])).toEqual([prod.id, prodSkip.id].sort());
  });

  it('with no filter (and on v1 with no body) runs every activated check; deactivated ones and heartbeats are left out', async () => {
    const on = await check(acme, { name: 'on' });
    await check(acme, { name: 'off', activated: false });
    await check(acme, { name: 'hb', checkType: 'HEARTBEAT', locationIds: [] });
    expect(sessionsOf(await trigger(acme, {})).map((s) => s.checkId)).toEqual([on.id]);
    const v1 = await api(acme, 'POST', '/v1/check-sessions/trigger');
    expect(v1.status).toBe(201);
    expect(sessionsOf(v1).map((s) => s.checkId)).toEqual([on.id]);
  });

  it('answers 404 "No matching checks were found." when nothing matches', async () => {
    await check(acme, { tags: ['a'] });
    for (const body of [{ target: { matchTags: [['b']] } }, { target: { checkId: [crypto.randomUUID()] } }]) {
      const res = await trigger(acme, body);
      expect(res.status).toBe(404);
      expect(res.body).toEqual({ statusCode: 404, error: 'Not Found', message: 'No matching checks were found.' });
    }
  });

  it.each([
    ['a check id that is no uuid', { target: { checkId: ['nope'] } }, /body\/target\/checkId\/0/],
    ['matchTags that are not arrays of tags', { target: { matchTags: [[{}]] } }, /body\/target\/matchTags\/0\/0/],
    [
      'a filter the reference does not define',
      { target: { groupId: 5 } },
      /body\/target\/groupId is not a target filter/,
    ],
    ['a refreshCache that is no boolean', { refreshCache: 'soon' }, /body\/refreshCache/],
  ])('answers 400 naming the field for %s', async (_what, body, message) => {
    await check(acme);
    const res = await trigger(acme, body);
    expect(res.status).toBe(400);
    expect(res.body.message).toMatch(message);
  });
});

describe('reading and awaiting a session', () => {
  it('an idle agent starts the run at once, and completion returns the verdicts it posts', async () => {
    const c = await check(acme, { locationIds: [acme.location.id] });
    const a = await agent(acme);
    // The agent is idle, holding a long-poll; the trigger wakes it with the session's run.
    const held = a.lease(10, 10);
    while (svc.service.dispatcher.waitingRequests === 0) await new Promise((r) => setImmediate(r));
    const [session] = sessionsOf(await trigger(acme, { target: { checkId: [c.id] } }));
    const jobs = await held;
    expect(jobs.map((j) => j.check.id)).toEqual([c.id]);

    const awaited = api(acme, 'GET', `/v2/check-sessions/${session?.checkSessionId}/completion?maxWaitSeconds=30`);
    const during = await api(acme, 'GET', `/v2/check-sessions/${session?.checkSessionId}`);
    expect(during.body).toMatchObject({ status: 'STARTED', stoppedAt: null, results: [] });
    await a.submit(jobs[0] as Job, { responseTime: 42 });
    const done = await awaited;
    expect(done.status).toBe(200);
    expect(done.body).toMatchObject({
      checkSessionId: session?.checkSessionId,
      status: 'PASSED',
      runLocations: [acme.location.slugName],
    });
    expect(done.body.stoppedAt).toEqual(expect.any(String));
    const [result] = done.body.results as Array<Record<string, unknown>>;
    expect(result).toMatchObject({
      checkId: c.id,
      runLocation: acme.location.slugName,
      resultType: 'FINAL',
      hasFailures: false,
      hasErrors: false,
      isDegraded: false,
      isCancelled: false,
      responseTime: 42,
    });
    expect(result?.checkResultLink).toBe(
      `https://outpost.example.com/app/checks/${c.id}/results/${result?.checkResultId}`,
    );
    // GET now gives the same, and the result is a stored check result.
    expect((await api(acme, 'GET', `/v1/check-sessions/${session?.checkSessionId}`)).body).toMatchObject({
      status: 'PASSED',
      results: [result],
    });
    expect((await api(acme, 'GET', `/v1/check-results/${c.id}/${result?.checkResultId}`)).status).toBe(200);
  });

  it('is PROGRESS_FAILED while one location failed and another still runs; completion then answers 408', async () => {
    const lab = await svc.service.store.locations.create(acme.accountId, {
      name: 'Lab',
      slugName: `lab-f-${tenants}`,
      icon: 'location',
      proxyUrl: null,
    });
    const c = await check(acme, { locationIds: [acme.location.id, lab.id] });
    const a = await agent(acme);
    const [session] = sessionsOf(await trigger(acme, { target: { checkId: [c.id] } }));
    const [job] = await a.lease();
    await a.submit(job as Job, { hasFailures: true, error: 'status 500' });
    const path = `/v2/check-sessions/${session?.checkSessionId}`;
    expect((await api(acme, 'GET', path)).body).toMatchObject({ status: 'PROGRESS_FAILED', stoppedAt: null });
    const timedOut = await api(acme, 'GET', `${path}/completion?maxWaitSeconds=1`);
    expect(timedOut.status).toBe(408);
    expect(timedOut.headers.get('retry-after')).toBe('1');
    expect(timedOut.body).toMatchObject({ statusCode: 408, error: 'Request Timeout' });
    expect(timedOut.body.message).toMatch(/still in progress.*retry/i);
  });

  it('refuses a maxWaitSeconds outside 1 to 30, naming it', async () => {
    const c = await check(acme);
    const [session] = sessionsOf(await trigger(acme, { target: { checkId: [c.id] } }));
    for (const wait of ['0', '31', 'soon']) {
      const res = await api(
        acme,
        'GET',
        `/v2/check-sessions/${session?.checkSessionId}/completion?maxWaitSeconds=${wait}`,
      );
      expect(res.status).toBe(400);
      expect(res.body.message).toMatch(/querystring\/maxWaitSeconds/);
    }
  });

  it("another account's session is a 404 for GET, completion and cancel", async () => {
    const c = await check(acme);
    const [session] = sessionsOf(await trigger(acme, { target: { checkId: [c.id] } }));
    const other = await tenant();
    const id = session?.checkSessionId;
    for (const [method, path, body] of [
      ['GET', `/v2/check-sessions/${id}`],
      ['GET', `/v1/check-sessions/${id}`],
      ['GET', `/v2/check-sessions/${id}/completion?maxWaitSeconds=1`],
      ['POST', `/v1/check-sessions/${id}/cancel`, {}],
    ] as const) {
      const res = await api(other, method, path, body);
      expect(res.status, path).toBe(404);
      expect(res.body).toMatchObject({ statusCode: 404, message: 'No such check session.' });
    }
    expect((await api(acme, 'GET', `/v2/check-sessions/${crypto.randomUUID()}`)).status).toBe(404);
    expect((await api(acme, 'GET', '/v2/check-sessions/not-a-uuid')).status).toBe(400);
  });
});

describe('POST /v1/check-sessions/{id}/cancel', () => {
  it('cancels the queued runs: v2 says CANCELLED, v1 TIMED_OUT, and completion answers at once', async () => {
    const c = await check(acme);
    const [session] = sessionsOf(await trigger(acme, { target: { checkId: [c.id] } }));
    const id = session?.checkSessionId;
    const res = await api(acme, 'POST', `/v1/check-sessions/${id}/cancel`, {});
    expect(res.status).toBe(204);
    expect((await api(acme, 'GET', `/v2/check-sessions/${id}/completion`)).body).toMatchObject({
      status: 'CANCELLED',
      results: [],
    });
    expect((await api(acme, 'GET', `/v1/check-sessions/${id}/completion`)).body).toMatchObject({ status: 'TIMED_OUT' });
    // Nothing is left to hand out.
    expect(await (await agent(acme)).lease()).toEqual([]);
  });

  it('refuses an unknown property and an empty sequenceId list', async () => {
    const c = await check(acme);
    const [session] = sessionsOf(await trigger(acme, { target: { checkId: [c.id] } }));
    const empty = await api(acme, 'POST', `/v1/check-sessions/${session?.checkSessionId}/cancel`, { sequenceId: [] });
    expect(empty.status).toBe(400);
    expect(empty.body.message).toMatch(/body\/sequenceId/);
  });
});

describe('dispatch of session runs', () => {
  it('claims a session run before scheduled runs of the location that were due earlier', async () => {
    const [first, second, onDemand] = [
      await check(acme, { name: 'one' }),
      await check(acme, { name: 'two' }),
      await check(acme, { name: 'now' }),
    ];
    const dispatcher = svc.service.dispatcher;
    await dispatcher.enqueue(first, acme.location.id, Date.now() - 5_000);
    await dispatcher.enqueue(second, acme.location.id, Date.now() - 2_000);
    await trigger(acme, { target: { checkId: [onDemand.id] } });
    const a = await agent(acme);
    expect((await a.lease(1)).map((j) => j.check.name)).toEqual(['now']);
    expect((await a.lease(1)).map((j) => j.check.name)).toEqual(['one']);
    expect((await a.lease(1)).map((j) => j.check.name)).toEqual(['two']);
  });

  it('a failing session run is FINAL and moves the check status as a scheduled one does', async () => {
    const retryStrategy = {
      type: 'FIXED',
      baseBackoffSeconds: 0,
      maxRetries: 2,
      maxDurationSeconds: 600,
      sameRegion: true,
    };
    const c = await check(acme, {
      body: { name: 'x', request: { method: 'GET', url: 'http://127.0.0.1:9/' }, retryStrategy },
    });
    const [session] = sessionsOf(await trigger(acme, { target: { checkId: [c.id] } }));
    const a = await agent(acme);
    const [job] = await a.lease();
    await a.submit(job as Job, { hasFailures: true, error: 'connect ECONNREFUSED 127.0.0.1:9' });
    const done = await api(acme, 'GET', `/v2/check-sessions/${session?.checkSessionId}/completion`);
    expect(done.body).toMatchObject({ status: 'FAILED', results: [{ resultType: 'FINAL', hasFailures: true }] });
    const store = svc.service.store;
    // The reference's "standard alerting rules apply to finished check runs".
    expect(await store.checkStatuses.get(acme.accountId, c.id)).toMatchObject({ hasFailures: true });
    // Not retried: nothing else to run.
    await svc.service.dispatcher.sweep();
    expect(await a.lease()).toEqual([]);
    // The control: the same failure from a scheduled run is retried (an ATTEMPT).
    await svc.service.dispatcher.enqueue(c, acme.location.id, Date.now());
    const [scheduled] = await a.lease();
    await a.submit(scheduled as Job, { hasFailures: true, error: 'connect ECONNREFUSED 127.0.0.1:9' });
    const { entries } = await store.results.list(acme.accountId, c.id, { limit: 10 });
    expect(entries.map((r) => r.resultType)).toEqual(['ATTEMPT', 'FINAL']);
  });
});

describe.each(storeBackends())('check sessions in the store on $name', (backend) => {
  let fresh: FreshStore;
  let h: Harness;
  let sessions: CheckSessions;
  beforeEach(async () => {
    fresh = await backend.fresh();
    h = await startHarness({ openStore: () => fresh.open(), retries: true });
    sessions = new CheckSessions({
      store: h.store,
      dispatcher: h.dispatcher,
      locationSlug: async (id) => (await h.store.locations.getById(id))?.slugName ?? id,
    });
  });
  afterEach(async () => {
    await h.close();
    await fresh.dispose();
  });

  it('claims session runs first, wakes completion on the result, moves the status, and cancels', async () => {
    const t = await h.tenant();
    const [early, onDemand, later] = [
      await h.check(t, { name: 'early' }),
      await h.check(t, { name: 'now' }),
      await h.check(t, { name: 'later' }),
    ];
    await h.dispatcher.enqueue(early, t.location.id, h.clock.now - 5_000);
    const [started] = await sessions.trigger(t.accountId, { checkId: [onDemand.id] });
    const id = started?.session.id ?? '';
    const agentOf = await h.agent(t);
    const [job] = await agentOf.lease({ slots: { uptime: 1 } });
    expect(job?.check.name).toBe('now');

    const awaited = sessions.completion(t.accountId, id, 10_000);
    await agentOf.submit(job as Job, { hasFailures: true, error: 'status 500' });
    const done = await awaited;
    expect(done).toMatchObject({ done: true, status: 'FAILED' });
    expect(done?.runs.map((r) => [r.verdict, r.result?.resultType])).toEqual([['failed', 'FINAL']]);
    expect(await h.store.checkStatuses.get(t.accountId, onDemand.id)).toMatchObject({ hasFailures: true });

    const [second] = await sessions.trigger(t.accountId, { checkId: [later.id] });
    expect((await sessions.cancel(t.accountId, second?.session.id ?? ''))?.status).toBe('CANCELLED');
    expect(await sessions.state(crypto.randomUUID(), id)).toBeUndefined();
    // What is left is the scheduled run.
    expect((await agentOf.lease()).map((j) => j.check.name)).toEqual(['early']);
  });

  it('completion reads the session about once a second while nothing happens, and a shutdown answers it', async () => {
    const t = await h.tenant();
    await h.check(t);
    const [started] = await sessions.trigger(t.accountId, {});
    const id = started?.session.id ?? '';
    const runsOf = h.store.checkSessions.runsOf.bind(h.store.checkSessions);
    let reads = 0;
    h.store.checkSessions.runsOf = (sessionId) => {
      reads++;
      return runsOf(sessionId);
    };
    // Two seconds held without a result: the first read and the fallback's, no busy loop.
    expect(await sessions.completion(t.accountId, id, 2_000)).toMatchObject({ done: false, status: 'STARTED' });
    expect(reads).toBeGreaterThanOrEqual(2);
    expect(reads).toBeLessThanOrEqual(4);
    // A stopping dispatcher answers held completions at once (their clients ask again, elsewhere).
    const held = sessions.completion(t.accountId, id, 30_000);
    while (h.dispatcher.sessionWaiters.size === 0) await new Promise((r) => setImmediate(r));
    await h.dispatcher.stop();
    expect(await held).toMatchObject({ done: false });
  });

  it('completion ends at its deadline after one last read, even when timers fire before performance.now() says', async () => {
    const t = await h.tenant();
    await h.check(t);
    const [started] = await sessions.trigger(t.accountId, {});
    const runsOf = h.store.checkSessions.runsOf.bind(h.store.checkSessions);
    let reads = 0;
    h.store.checkSessions.runsOf = (sessionId) => {
      reads++;
      return runsOf(sessionId);
    };
    // A clock at half speed: every timer fires "early" by it, as libuv's cached loop time can make
    // them under load. Without the deadline rule this read the session a dozen times in a row.
    const now = performance.now.bind(performance);
    const origin = now();
    const slow = vi.spyOn(performance, 'now').mockImplementation(() => origin + (now() - origin) / 2);
    try {
      expect(await sessions.completion(t.accountId, started?.session.id ?? '', 1_500)).toMatchObject({ done: false });
    } finally {
      slow.mockRestore();
    }
    // Reads at 0, after the first fallback wait (the slow clock says about 500 ms), maybe after a
    // second one (when the clock still shows over a second to go), and after the wait to the deadline.
    expect(reads).toBeGreaterThanOrEqual(3);
    expect(reads).toBeLessThanOrEqual(4);
  });

  it('a running run cancelled ends the session CANCELLED once its agent reports', async () => {
    const t = await h.tenant();
    const c = await h.check(t);
    const [started] = await sessions.trigger(t.accountId, {});
    const a = await h.agent(t);
    const [job] = await a.lease();
    const id = started?.session.id ?? '';
    expect((await sessions.cancel(t.accountId, id))?.status).toBe('STARTED');
    expect((await a.heartbeat([{ runId: job?.runId ?? '', leaseId: job?.leaseId ?? '' }]))[0]?.state).toBe('cancelled');
    await a.submit(job as Job, { isCancelled: true, error: 'cancelled' });
    expect(await sessions.completion(t.accountId, id, 1_000)).toMatchObject({ done: true, status: 'CANCELLED' });
    expect(c.id).toBe(started?.session.checkId);
  });
});

describe('SessionWaiters', () => {
  it('wakes a held completion on a result, and never loses one stored between the read and the wait', async () => {
    const waiters = new SessionWaiters();
    waiters.watch('s');
    const seen = waiters.version('s');
    const held = waiters.wait('s', seen, 60_000);
    waiters.notify('s');
    expect(await held).toBe('woken');
    // A result stored after the request read the version but before it waits: the wait returns at once.
    const read = waiters.version('s');
    waiters.notify('s');
    expect(await waiters.wait('s', read, 60_000)).toBe('woken');
    waiters.unwatch('s');
    expect(waiters.size).toBe(0);
  });
});
