/**
 * The dispatcher's queue and the agent protocol over HTTP: claiming, long-polling, heartbeats,
 * expiry, results, cancel, release, capabilities and auth. A real SQLite store; time moves only
 * when a test moves the dispatcher's clock and calls sweep().
 */
import http from 'node:http';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { Scheduler } from '../../src/service/dispatch/scheduler.ts';
import { MAX_EXPIRED_LEASES } from '../../src/service/store/repos/runs.ts';
import { AGENT_PATHS, type Job } from '../../src/shared/protocol.ts';
import { type Harness, silentLog, startHarness } from '../helpers/dispatch-harness.ts';

let h: Harness;

afterEach(async () => {
  await h?.close();
});

/** Starts `h` afresh before each test of the describe it is called in (afterEach above closes it). */
function harnessForEachTest(options?: Parameters<typeof startHarness>[0]): void {
  beforeEach(async () => {
    h = await startHarness(options);
  });
}

async function runOf(runId: string) {
  const run = await h.store.runs.get(runId);
  if (!run) throw new Error(`run ${runId} missing`);
  return run;
}

describe('claiming', () => {
  harnessForEachTest();

  it('never hands the same run to two agents, even when they lease at the same moment', async () => {
    const t = await h.tenant();
    const check = await h.check(t);
    for (let i = 0; i < 30; i++) await h.dispatcher.enqueue(check, t.location.id, h.clock.now - i);
    const agents = await Promise.all(Array.from({ length: 6 }, () => h.agent(t)));
    // 6 agents x 8 requests, each asking for up to 3 runs: far more demand than the 30 runs.
    const batches = await Promise.all(
      agents.flatMap((a) => Array.from({ length: 8 }, () => a.lease({ slots: { uptime: 3 } }))),
    );
    const runIds = batches.flat().map((j) => j.runId);
    expect(runIds).toHaveLength(30);
    expect(new Set(runIds).size).toBe(30);
    expect(batches.every((b) => b.length <= 3)).toBe(true);
  });

  it('hands out the oldest due runs first, up to the free slots of each class', async () => {
    const t = await h.tenant();
    const api = await h.check(t);
    const browser = await h.check(t, {
      checkType: 'BROWSER',
      name: 'Login flow',
      body: { name: 'Login flow', script: 'await page.goto("http://127.0.0.1:9/")' },
    });
    const base = h.clock.now;
    /** Enqueued when due, as the scheduler does (a later enqueue would move its start deadline on). */
    const enqueueAt = async (check: typeof api, dueAt: number) => {
      h.clock.now = dueAt;
      return h.dispatcher.enqueue(check, t.location.id, dueAt);
    };
    const late = await enqueueAt(api, base - 1_000);
    const early = await enqueueAt(api, base - 5_000);
    await enqueueAt(browser, base - 3_000);
    h.clock.now = base;
    const agent = await h.agent(t, { checkTypes: ['API', 'BROWSER'] });

    const first = await agent.lease({ slots: { uptime: 1, heavy: 0 } });
    expect(first.map((j) => j.runId)).toEqual([early.runId]);
    expect(first[0]).toMatchObject({ leaseAttempt: 1, checkClass: 'uptime', timeoutMs: 30_000 });
    expect(first[0]?.check).toMatchObject({ id: api.id, checkType: 'API', name: 'Homepage' });

    const second = await agent.lease({ slots: { uptime: 5, heavy: 1 } });
    expect(second.map((j) => j.checkClass).sort()).toEqual(['heavy', 'uptime']);
    expect(second.find((j) => j.checkClass === 'uptime')?.runId).toBe(late.runId);
    expect(second.find((j) => j.checkClass === 'heavy')?.timeoutMs).toBe(240_000);
  });

  it('hands out a run enqueued ahead of its due time with how long to wait (startInMs), and a due one with none', async () => {
    const t = await h.tenant();
    const ahead = await h.check(t, { name: 'ahead' });
    const due = await h.check(t, { name: 'due' });
    await h.dispatcher.enqueue(ahead, t.location.id, h.clock.now + 80);
    await h.dispatcher.enqueue(due, t.location.id, h.clock.now - 20);
    const jobs = await (await h.agent(t)).lease({ slots: { uptime: 5 } });
    const waits = Object.fromEntries(jobs.map((j) => [j.check.name, j.startInMs]));
    expect(waits).toEqual({ ahead: 80, due: 0 });
  });

  it('only hands an agent check types it registered a runner for', async () => {
    const t = await h.tenant();
    const tcp = await h.check(t, {
      checkType: 'TCP',
      name: 'Port',
      body: { name: 'Port', request: { hostname: '127.0.0.1', port: 9 } },
    });
    const run = await h.dispatcher.enqueue(tcp, t.location.id, h.clock.now);
    const apiOnly = await h.agent(t, { checkTypes: ['API'] });
    expect(await apiOnly.lease()).toEqual([]);
    const tcpAgent = await h.agent(t, { checkTypes: ['TCP'] });
    expect((await tcpAgent.lease()).map((j) => j.runId)).toEqual([run.runId]);
  });

  it('never hands out another location’s runs', async () => {
    const a = await h.tenant('A');
    const b = await h.tenant('B');
    await h.dispatcher.enqueue(await h.check(a), a.location.id, h.clock.now);
    const agentB = await h.agent(b);
    expect(await agentB.lease()).toEqual([]);
  });
});

describe('long-poll', () => {
  it('answers a held lease request as soon as a run it can take is enqueued', async () => {
    h = await startHarness();
    const t = await h.tenant();
    const check = await h.check(t);
    const agent = await h.agent(t);
    const pending = agent.lease({ waitSeconds: 20 });
    await vi.waitFor(() => expect(h.dispatcher.waitingRequests).toBe(1));

    const enqueuedAt = performance.now();
    const run = await h.dispatcher.enqueue(check, t.location.id, h.clock.now);
    const jobs = await pending;
    const tookMs = performance.now() - enqueuedAt;

    expect(jobs.map((j) => j.runId)).toEqual([run.runId]);
    expect(tookMs).toBeLessThan(1000);
    expect(h.dispatcher.waitingRequests).toBe(0);
  });

  it('is not woken by a run it cannot take, and returns empty when the wait is over', async () => {
    h = await startHarness({ config: { maxLeaseWaitSeconds: 1 } });
    const t = await h.tenant();
    const tcp = await h.check(t, {
      checkType: 'TCP',
      name: 'Port',
      body: { name: 'Port', request: { hostname: '127.0.0.1', port: 9 } },
    });
    const agent = await h.agent(t, { checkTypes: ['API'] });
    // Asks for 30 s; the service caps the wait at maxLeaseWaitSeconds (1 s).
    const pending = agent.lease({ waitSeconds: 30 });
    await vi.waitFor(() => expect(h.dispatcher.waitingRequests).toBe(1));
    await h.dispatcher.enqueue(tcp, t.location.id, h.clock.now);
    expect(h.dispatcher.waitingRequests).toBe(1);
    expect(await pending).toEqual([]);
  });

  it('drops the waiter of a client that disconnected and claims nothing for it', async () => {
    h = await startHarness({ listen: true });
    const t = await h.tenant();
    const check = await h.check(t);
    const gone = await h.agent(t);
    const url = new URL(AGENT_PATHS.lease, h.url);
    const req = http.request(url, {
      method: 'POST',
      headers: { authorization: `Bearer ${t.key}`, 'content-type': 'application/json' },
    });
    req.on('error', () => {});
    req.end(JSON.stringify({ agentId: gone.agentId, slots: { uptime: 5, heavy: 0 }, waitSeconds: 20 }));
    await vi.waitFor(() => expect(h.dispatcher.waitingRequests).toBe(1));

    req.destroy();
    await vi.waitFor(() => expect(h.dispatcher.waitingRequests).toBe(0));
    const run = await h.dispatcher.enqueue(check, t.location.id, h.clock.now);
    expect((await runOf(run.runId)).state).toBe('queued');

    const other = await h.agent(t);
    const jobs = await other.lease();
    expect(jobs.map((j) => [j.runId, j.leaseAttempt])).toEqual([[run.runId, 1]]);
  });

  it('answers every held request with no jobs when the dispatcher stops', async () => {
    h = await startHarness();
    const t = await h.tenant();
    const agents = await Promise.all([h.agent(t), h.agent(t)]);
    const pending = agents.map((a) => a.lease({ waitSeconds: 20 }));
    await vi.waitFor(() => expect(h.dispatcher.waitingRequests).toBe(2));
    await h.dispatcher.stop();
    expect(await Promise.all(pending)).toEqual([[], []]);
  });
});

describe('leases', () => {
  harnessForEachTest({ config: { leaseSeconds: 30 } });

  it('heartbeats extend a lease; without them it expires and another agent gets the run as attempt 2', async () => {
    const t = await h.tenant();
    const run = await h.dispatcher.enqueue(await h.check(t), t.location.id, h.clock.now);
    const dying = await h.agent(t);
    const [job] = await dying.lease();
    if (!job) throw new Error('no job');

    h.clock.now += 20_000;
    const [beat] = await dying.heartbeat([job]);
    expect(beat).toMatchObject({
      runId: run.runId,
      state: 'active',
      leaseExpiresAt: new Date(h.clock.now + 30_000).toISOString(),
    });
    h.clock.now += 20_000; // past the first expiry, within the extended one
    await h.dispatcher.sweep();
    expect((await runOf(run.runId)).state).toBe('leased');

    // The agent dies: no more heartbeats.
    const waiting = (await h.agent(t)).lease({ waitSeconds: 20 });
    await vi.waitFor(() => expect(h.dispatcher.waitingRequests).toBe(1));
    h.clock.now += 31_000;
    await h.dispatcher.sweep();
    const [retry] = await waiting;
    expect(retry).toMatchObject({ runId: run.runId, leaseAttempt: 2 });
    expect(retry?.leaseId).not.toBe(job.leaseId);

    // The first agent comes back: its lease is gone.
    expect((await dying.heartbeat([job]))[0]).toMatchObject({ state: 'lost', leaseExpiresAt: null });
  });

  it('gives a run up after its lease expired MAX_EXPIRED_LEASES times: a check that kills its agents does not poison the queue', async () => {
    const t = await h.tenant();
    const run = await h.dispatcher.enqueue(await h.check(t), t.location.id, h.clock.now);
    for (let attempt = 1; attempt <= MAX_EXPIRED_LEASES; attempt++) {
      const [job] = await (await h.agent(t)).lease();
      expect(job).toMatchObject({ runId: run.runId, leaseAttempt: attempt });
      h.clock.now += 31_000; // the agent died while running it: no heartbeat, no result
      await h.dispatcher.sweep();
    }
    expect(await runOf(run.runId)).toMatchObject({
      state: 'expired',
      endReason: `its agent stopped heartbeating in each of ${MAX_EXPIRED_LEASES} leases; not handed out again (does the check crash its agent?)`,
    });
    expect(await (await h.agent(t)).lease()).toEqual([]);
  });

  it('release hands leases back at once; deregister hands back the rest and retires the agent', async () => {
    const t = await h.tenant();
    const check = await h.check(t);
    const r1 = await h.dispatcher.enqueue(check, t.location.id, h.clock.now - 2);
    const r2 = await h.dispatcher.enqueue(await h.check(t, { name: 'Other' }), t.location.id, h.clock.now - 1);
    const leaving = await h.agent(t);
    const jobs = await leaving.lease();
    expect(jobs).toHaveLength(2);
    const [j1] = jobs as [Job, Job];

    const released = await leaving.post(AGENT_PATHS.release, {
      agentId: leaving.agentId,
      leases: [{ runId: j1.runId, leaseId: j1.leaseId, reason: 'shutting down' }],
    });
    expect(released.statusCode).toBe(200);
    expect(released.json()).toEqual({ released: [r1.runId] });
    expect(await runOf(r1.runId)).toMatchObject({ state: 'queued', leaseAttempt: 2, leaseId: null });

    const dereg = await leaving.post(AGENT_PATHS.deregister, { agentId: leaving.agentId });
    expect(dereg.statusCode).toBe(200);
    expect(await runOf(r2.runId)).toMatchObject({ state: 'queued', leaseAttempt: 2 });
    expect((await h.store.agents.get(leaving.agentId))?.goneAt).not.toBeNull();

    const after = await leaving.post(AGENT_PATHS.lease, {
      agentId: leaving.agentId,
      slots: { uptime: 1, heavy: 0 },
      waitSeconds: 0,
    });
    expect(after.statusCode).toBe(409);
    expect(after.json().message).toMatch(/register again/);

    const next = await h.agent(t);
    expect((await next.lease()).map((j) => [j.runId, j.leaseAttempt]).sort()).toEqual(
      [
        [r1.runId, 2],
        [r2.runId, 2],
      ].sort(),
    );
  });
});

describe('queue expiry', () => {
  harnessForEachTest();

  it('expires a run nobody leased within queueTtlSeconds, with the reason', async () => {
    expect(h.config.queueTtlSeconds).toBe(360);
    const t = await h.tenant();
    const run = await h.dispatcher.enqueue(await h.check(t), t.location.id, h.clock.now);
    h.clock.now += 359_000;
    await h.dispatcher.sweep();
    expect((await runOf(run.runId)).state).toBe('queued');
    h.clock.now += 2_000;
    await h.dispatcher.sweep();
    const expired = await runOf(run.runId);
    expect(expired.state).toBe('expired');
    expect(expired.endReason).toBe(
      'not leased within 360s: no agent of location "office-1" took it (no agent was connected)',
    );
    expect(expired.finishedAt).not.toBeNull();
  });

  it('says when connected agents cannot run the check type', async () => {
    const t = await h.tenant();
    const run = await h.dispatcher.enqueue(await h.check(t), t.location.id, h.clock.now);
    await h.agent(t, { checkTypes: ['TCP'] });
    h.clock.now += 361_000;
    // Keep the agent "connected" at the moment of the sweep.
    await h.store.agents.touch(
      (await h.store.agents.listByLocation(t.location.id))[0]!.id,
      new Date(h.clock.now).toISOString(),
    );
    await h.dispatcher.sweep();
    expect((await runOf(run.runId)).endReason).toMatch(
      /^not leased within 360s: no agent of location "office-1" took it \(1 agent\(s\) connected, none runs API checks\)$/,
    );
  });

  it('supersedes a never-leased queued run when the next run of the check comes due', async () => {
    const t = await h.tenant();
    const check = await h.check(t);
    const old = await h.dispatcher.enqueue(check, t.location.id, h.clock.now);
    const newer = await h.dispatcher.enqueue(check, t.location.id, h.clock.now + 60_000);
    expect(await runOf(old.runId)).toMatchObject({ state: 'expired', endReason: 'superseded by a newer run' });
    expect((await runOf(newer.runId)).state).toBe('queued');
  });

  it('does not supersede a run that was handed back after its agent died: it is re-run elsewhere', async () => {
    const t = await h.tenant();
    const check = await h.check(t);
    const first = await h.dispatcher.enqueue(check, t.location.id, h.clock.now);
    await (await h.agent(t)).lease();
    h.clock.now += h.config.leaseSeconds * 1000 + 1;
    await h.dispatcher.sweep();
    await h.dispatcher.enqueue(check, t.location.id, h.clock.now);
    expect(await runOf(first.runId)).toMatchObject({ state: 'queued', leaseAttempt: 2 });
  });
});

describe('results', () => {
  harnessForEachTest();

  it('stores a result once per run: a retried upload and a second agent’s late result are duplicates', async () => {
    const t = await h.tenant();
    const run = await h.dispatcher.enqueue(await h.check(t), t.location.id, h.clock.now);
    const slow = await h.agent(t);
    const [job1] = await slow.lease();
    h.clock.now += h.config.leaseSeconds * 1000 + 1;
    await h.dispatcher.sweep();
    const fast = await h.agent(t);
    const [job2] = await fast.lease();
    if (!job1 || !job2) throw new Error('no job');

    const first = await fast.submit(job2);
    expect(first.statusCode).toBe(200);
    expect(first.json()).toMatchObject({ status: 'stored' });
    const retried = await fast.submit(job2);
    expect(retried.json()).toEqual({ status: 'duplicate', resultId: first.json().resultId });
    const late = await slow.submit(job1);
    expect(late.json()).toEqual({ status: 'duplicate', resultId: first.json().resultId });

    expect(await h.store.results.countForRun(run.runId)).toBe(1);
    expect(await runOf(run.runId)).toMatchObject({ state: 'completed' });
    expect((await fast.heartbeat([job2]))[0]?.state).toBe('lost');
  });

  it('answers 404 for an unknown run and for another location’s run', async () => {
    const a = await h.tenant('A');
    const b = await h.tenant('B');
    await h.dispatcher.enqueue(await h.check(a), a.location.id, h.clock.now);
    const agentA = await h.agent(a);
    const [job] = await agentA.lease();
    if (!job) throw new Error('no job');
    const agentB = await h.agent(b);
    const foreign = await agentB.submit(job);
    expect(foreign.statusCode).toBe(404);
    expect(foreign.json()).toMatchObject({ statusCode: 404, error: 'Not Found' });
    const unknown = await agentA.submit({ ...job, runId: crypto.randomUUID() });
    expect(unknown.statusCode).toBe(404);
    expect(await h.store.results.countForRun(job.runId)).toBe(0);
  });
});

describe('cancel', () => {
  harnessForEachTest();

  it('cancels a queued run at once and flags a leased one, which its agent learns on the next heartbeat', async () => {
    const t = await h.tenant();
    const queued = await h.dispatcher.enqueue(await h.check(t), t.location.id, h.clock.now);
    const cancel = await h.app.inject({
      method: 'POST',
      url: `/v1/check-runs/${queued.runId}/cancel`,
      headers: t.headers,
    });
    expect(cancel.statusCode).toBe(200);
    expect(cancel.json()).toMatchObject({ runId: queued.runId, state: 'cancelled' });
    const agent = await h.agent(t);
    expect(await agent.lease()).toEqual([]);

    const leasedRun = await h.dispatcher.enqueue(await h.check(t, { name: 'Second' }), t.location.id, h.clock.now);
    const [job] = await agent.lease();
    if (!job) throw new Error('no job');
    const flagged = await h.app.inject({
      method: 'POST',
      url: `/v1/check-runs/${leasedRun.runId}/cancel`,
      headers: t.headers,
    });
    expect(flagged.json()).toMatchObject({ runId: leasedRun.runId, state: 'leased', cancelRequested: true });
    expect((await agent.heartbeat([job]))[0]?.state).toBe('cancelled');

    await agent.submit(job, { isCancelled: true, error: 'cancelled' });
    const view = await h.app.inject({ method: 'GET', url: `/v1/check-runs/${leasedRun.runId}`, headers: t.headers });
    expect(view.json()).toMatchObject({
      runId: leasedRun.runId,
      state: 'cancelled',
      leaseAttempt: 1,
      agentId: agent.agentId,
      dueAt: leasedRun.dueAt,
    });
  });

  it('answers 404 for another account’s run', async () => {
    const a = await h.tenant('A');
    const b = await h.tenant('B');
    const run = await h.dispatcher.enqueue(await h.check(a), a.location.id, h.clock.now);
    for (const req of [
      { method: 'POST' as const, url: `/v1/check-runs/${run.runId}/cancel` },
      { method: 'GET' as const, url: `/v1/check-runs/${run.runId}` },
    ]) {
      const res = await h.app.inject({ ...req, headers: b.headers });
      expect(res.statusCode).toBe(404);
    }
    expect((await runOf(run.runId)).state).toBe('queued');
  });

  it('cancels the open runs of a check that is deleted or deactivated', async () => {
    const t = await h.tenant();
    const scheduler = new Scheduler({ store: h.store, config: h.config, dispatcher: h.dispatcher, log: silentLog });
    const check = await h.check(t);
    const leased = await h.dispatcher.enqueue(check, t.location.id, h.clock.now - 1);
    const agent = await h.agent(t);
    const [job] = await agent.lease({ slots: { uptime: 1 } });
    const queued = await h.dispatcher.enqueue(check, t.location.id, h.clock.now);
    await scheduler.checkChanged(t.accountId, check.id, { ...check, activated: false });
    expect(await runOf(queued.runId)).toMatchObject({
      state: 'cancelled',
      endReason: 'cancelled: the check was deactivated',
    });
    expect(await runOf(leased.runId)).toMatchObject({ state: 'leased', cancelRequested: true });
    expect((await agent.heartbeat([job!]))[0]?.state).toBe('cancelled');
    await scheduler.stop();
  });
});

describe('agent authentication', () => {
  harnessForEachTest();

  it('refuses a missing, unknown or deleted location key with 401', async () => {
    const t = await h.tenant();
    const agent = await h.agent(t);
    const body = { agentId: agent.agentId, slots: { uptime: 1, heavy: 0 }, waitSeconds: 0 };
    for (const authorization of [undefined, 'Bearer pl_0000', `Bearer ${t.headers.authorization?.slice(7)}`]) {
      const res = await h.app.inject({
        method: 'POST',
        url: AGENT_PATHS.lease,
        headers: authorization ? { authorization } : {},
        payload: body,
      });
      expect(res.statusCode).toBe(401);
      expect(res.json()).toMatchObject({ statusCode: 401, error: 'Unauthorized' });
      expect(res.json().message).toMatch(/private location key was not accepted/);
    }
    const keys = await h.store.locations.listKeys(t.location.id);
    await h.store.locations.deleteKey(t.accountId, t.location.id, keys[0]!.id);
    expect((await agent.post(AGENT_PATHS.lease, body)).statusCode).toBe(401);
  });

  it('asks an agent that did not register (or registered elsewhere) to register again with 409', async () => {
    const a = await h.tenant('A');
    const b = await h.tenant('B');
    const agentA = await h.agent(a);
    const res = await h.app.inject({
      method: 'POST',
      url: AGENT_PATHS.heartbeat,
      headers: { authorization: `Bearer ${b.key}` },
      payload: { agentId: agentA.agentId, leases: [] },
    });
    expect(res.statusCode).toBe(409);
    expect(res.json()).toMatchObject({ statusCode: 409, error: 'Conflict' });
    expect(res.json().message).toMatch(/register again/);
  });

  it('registers with the service’s timing settings and refuses another protocol version', async () => {
    const t = await h.tenant();
    const agent = await h.agent(t);
    expect(agent.registration).toMatchObject({
      agentId: agent.agentId,
      location: { id: t.location.id, slugName: 'office-1', name: 'Office 1' },
      leaseSeconds: h.config.leaseSeconds,
      heartbeatSeconds: h.config.heartbeatSeconds,
      maxWaitSeconds: h.config.maxLeaseWaitSeconds,
    });
    const bad = await agent.post(AGENT_PATHS.register, {
      agentId: agent.agentId,
      version: 'x',
      protocolVersion: 99,
      hostname: 'h',
      capabilities: { checkTypes: ['API'], runtimes: [] },
    });
    expect(bad.statusCode).toBe(400);
  });
});
