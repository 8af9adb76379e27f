/**
 * Retries carried out by the dispatcher (RetryCoordinator) on a real SQLite store with an injected
 * clock: ATTEMPT and FINAL results, the backoff before a retry run is enqueued, its link to the
 * failed run, where it runs, onlyOn NETWORK_ERROR, group vs check strategy; plus the group merge in
 * enqueued jobs and the scheduler's view of group placement and activation.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createAccount } from '../../src/service/accounts.ts';
import { placementOf } from '../../src/service/checks/group-of.ts';
import { loadServiceConfig } from '../../src/service/config.ts';
import { Dispatcher } from '../../src/service/dispatch/dispatcher.ts';
import { RetryCoordinator } from '../../src/service/dispatch/retries.ts';
import { Scheduler } from '../../src/service/dispatch/scheduler.ts';
import type { CheckGroupBody, StoredCheckGroup } from '../../src/service/store/check-group-types.ts';
import { openSqliteStore } from '../../src/service/store/sqlite/index.ts';
import type { PrivateLocation, Store, StoredCheck } from '../../src/service/store/store.ts';
import type { ApiCheckDefinition, ApiCheckResult } from '../../src/shared/checks/types.ts';
import { type Job, PROTOCOL_VERSION, type RunResult } from '../../src/shared/protocol.ts';
import { resultFor, silentLog } from '../helpers/dispatch-harness.ts';

let dataDir: string;
let store: Store;
let dispatcher: Dispatcher;
const clock = { now: Date.parse('2026-05-01T12:00:00.000Z') };
let accountId: string;
let office: { location: PrivateLocation; key: string };
let lab: { location: PrivateLocation; key: string };

async function location(slugName: string) {
  const loc = await store.locations.create(accountId, { name: slugName, slugName, icon: 'location', proxyUrl: null });
  const { rawKey } = await store.locations.createKey(accountId, loc.id);
  return { location: loc, key: rawKey };
}

async function agentAt(where: { location: PrivateLocation; key: string }) {
  const agentId = crypto.randomUUID();
  await dispatcher.register(where.location, where.key, {
    agentId,
    version: '0.0.0-test',
    protocolVersion: PROTOCOL_VERSION,
    hostname: 'h',
    capabilities: { checkTypes: ['API'], runtimes: [] },
    concurrency: { uptime: 10, heavy: 1 },
  });
  return {
    async lease(): Promise<Job[]> {
      return (await dispatcher.lease(where.location, { agentId, slots: { uptime: 10, heavy: 0 }, waitSeconds: 0 }))
        .jobs;
    },
    async submit(job: Job, overrides: Partial<RunResult>) {
      return dispatcher.submitResult(where.location, {
        agentId,
        leaseId: job.leaseId,
        result: resultFor(job, agentId, overrides),
      });
    },
  };
}

const refused: Partial<RunResult> = {
  hasFailures: true,
  error: 'connect ECONNREFUSED 127.0.0.1:9',
  apiCheckResult: {
    requestError: 'connect ECONNREFUSED 127.0.0.1:9',
    response: null,
    assertions: [],
  } as unknown as ApiCheckResult,
};
const assertionFailed: Partial<RunResult> = {
  hasFailures: true,
  error: 'status 500',
  apiCheckResult: { requestError: null, response: { status: 500 }, assertions: [] } as unknown as ApiCheckResult,
};

async function check(body: Record<string, unknown>, locationIds = [office.location.id]): Promise<StoredCheck> {
  return store.checks.create({
    accountId,
    checkType: 'API',
    name: 'c',
    activated: true,
    muted: false,
    frequency: 10,
    frequencyOffset: null,
    locationIds,
    body: { name: 'c', request: { method: 'GET', url: 'http://127.0.0.1:9/' }, ...body },
  });
}

async function group(body: Partial<CheckGroupBody>, locationIds: string[] = []): Promise<StoredCheckGroup> {
  const full = {
    name: 'g',
    activated: true,
    muted: false,
    concurrency: 3,
    apiCheckDefaults: { url: '', headers: [], queryParameters: [], assertions: [], basicAuth: null },
    environmentVariables: [],
    retryStrategy: 'FALLBACK',
    ...body,
  } as CheckGroupBody;
  return store.checkGroups.create(accountId, {
    name: full.name,
    activated: full.activated,
    muted: full.muted,
    concurrency: 3,
    locationIds,
    body: full,
  });
}

const types = async (checkId: string, resultType: 'FINAL' | 'ATTEMPT' | 'ALL') =>
  (await store.results.list(accountId, checkId, { limit: 100, resultType })).entries
    .map((r) => [r.resultType, r.attempts])
    .reverse();

beforeEach(async () => {
  dataDir = mkdtempSync(path.join(tmpdir(), 'outpost-retries-'));
  store = await openSqliteStore(dataDir);
  const config = loadServiceConfig({ DATA_DIR: dataDir, PORT: '0' });
  const retries = new RetryCoordinator({
    store,
    log: silentLog,
    enqueue: (c, l, d, r) => dispatcher.enqueue(c, l, d, r),
  });
  dispatcher = new Dispatcher({
    store,
    config,
    log: silentLog,
    now: () => clock.now,
    sweepIntervalMs: 3_600_000,
    resultPolicy: retries,
  });
  await dispatcher.start();
  accountId = (await createAccount(store, 'Acme')).accountId;
  office = await location('office');
  lab = await location('lab');
});

afterEach(async () => {
  await dispatcher.stop();
  await store.close();
  rmSync(dataDir, { recursive: true, force: true });
});

describe('retries', () => {
  it('stores failed tries as ATTEMPT, enqueues each retry after its backoff, and ends with one FINAL', async () => {
    const c = await check({ retryStrategy: { type: 'LINEAR', baseBackoffSeconds: 10, maxRetries: 2 } });
    const agent = await agentAt(office);
    const first = await dispatcher.enqueue(c, office.location.id, clock.now);
    let [job] = await agent.lease();
    expect(job?.runId).toBe(first.runId);
    await agent.submit(job!, refused);
    expect(await types(c.id, 'ALL')).toEqual([['ATTEMPT', 1]]);
    expect((await store.runRetries.pending(accountId, c.id)).map((p) => p.dueAt)).toEqual([
      new Date(clock.now + 10_000).toISOString(),
    ]);

    // Not before its backoff (LINEAR: 10 s, then 20 s).
    clock.now += 9_999;
    await dispatcher.sweep();
    expect(await agent.lease()).toEqual([]);
    clock.now += 1;
    await dispatcher.sweep();
    [job] = await agent.lease();
    expect(job).toBeDefined();
    expect(await store.runRetries.linkOf(job!.runId)).toEqual({
      retryOf: first.runId,
      attempt: 2,
      chainStartedAt: first.dueAt,
    });
    await agent.submit(job!, refused);
    expect((await store.runRetries.pending(accountId, c.id))[0]?.dueAt).toBe(
      new Date(clock.now + 20_000).toISOString(),
    );

    clock.now += 20_000;
    await dispatcher.sweep();
    [job] = await agent.lease();
    expect((await store.runRetries.linkOf(job!.runId)).attempt).toBe(3);
    await agent.submit(job!, refused);
    // maxRetries 2: the third failure is final, and nothing more is planned.
    expect(await types(c.id, 'ALL')).toEqual([
      ['ATTEMPT', 1],
      ['ATTEMPT', 2],
      ['FINAL', 3],
    ]);
    expect(await types(c.id, 'FINAL')).toEqual([['FINAL', 3]]);
    expect(await types(c.id, 'ATTEMPT')).toHaveLength(2);
    expect(await store.runRetries.pending(accountId, c.id)).toEqual([]);
  });

  it('ends the chain with a passing retry as FINAL', async () => {
    const c = await check({ retryStrategy: { type: 'FIXED', baseBackoffSeconds: 0, maxRetries: 5 } });
    const agent = await agentAt(office);
    await dispatcher.enqueue(c, office.location.id, clock.now);
    await agent.submit((await agent.lease())[0]!, refused);
    await dispatcher.sweep();
    await agent.submit((await agent.lease())[0]!, { hasFailures: false });
    expect(await types(c.id, 'ALL')).toEqual([
      ['ATTEMPT', 1],
      ['FINAL', 2],
    ]);
  });

  it('plans one retry when the failed result is uploaded twice', async () => {
    const c = await check({ retryStrategy: { type: 'FIXED', baseBackoffSeconds: 5 } });
    const agent = await agentAt(office);
    await dispatcher.enqueue(c, office.location.id, clock.now);
    const [job] = await agent.lease();
    expect((await agent.submit(job!, refused)).status).toBe('stored');
    expect((await agent.submit(job!, refused)).status).toBe('duplicate');
    expect(await store.runRetries.pending(accountId, c.id)).toHaveLength(1);
  });

  it('with onlyOn NETWORK_ERROR retries a refused connection but not a failed assertion', async () => {
    const strategy = { type: 'FIXED', baseBackoffSeconds: 1, onlyOn: ['NETWORK_ERROR'] };
    const a = await check({ retryStrategy: strategy });
    const b = await check({ retryStrategy: strategy });
    const agent = await agentAt(office);
    await dispatcher.enqueue(a, office.location.id, clock.now);
    await dispatcher.enqueue(b, office.location.id, clock.now);
    for (const job of await agent.lease()) await agent.submit(job, job.check.id === a.id ? refused : assertionFailed);
    expect(await types(a.id, 'ALL')).toEqual([['ATTEMPT', 1]]);
    expect(await types(b.id, 'ALL')).toEqual([['FINAL', 1]]);
  });

  it("does not retry without a strategy, and the group's strategy wins unless it says FALLBACK", async () => {
    const plain = await check({});
    const g = await group({ retryStrategy: { type: 'FIXED', baseBackoffSeconds: 30 } });
    const grouped = await check({ groupId: g.id, retryStrategy: { type: 'FIXED', baseBackoffSeconds: 1 } });
    const fb = await group({ retryStrategy: 'FALLBACK' });
    const fallback = await check({ groupId: fb.id, retryStrategy: { type: 'FIXED', baseBackoffSeconds: 7 } });
    const agent = await agentAt(office);
    for (const c of [plain, grouped, fallback]) await dispatcher.enqueue(c, office.location.id, clock.now);
    for (const job of await agent.lease()) await agent.submit(job, refused);
    expect(await types(plain.id, 'ALL')).toEqual([['FINAL', 1]]);
    expect((await store.runRetries.pending(accountId, grouped.id))[0]?.dueAt).toBe(
      new Date(clock.now + 30_000).toISOString(),
    );
    expect((await store.runRetries.pending(accountId, fallback.id))[0]?.dueAt).toBe(
      new Date(clock.now + 7_000).toISOString(),
    );
  });

  it('retries at the next location without sameRegion, at the same one with it', async () => {
    const other = await check({ retryStrategy: { type: 'FIXED', baseBackoffSeconds: 0, sameRegion: false } }, [
      office.location.id,
      lab.location.id,
    ]);
    const same = await check({ retryStrategy: { type: 'FIXED', baseBackoffSeconds: 0, sameRegion: true } }, [
      office.location.id,
      lab.location.id,
    ]);
    const atOffice = await agentAt(office);
    await dispatcher.enqueue(other, office.location.id, clock.now);
    await dispatcher.enqueue(same, office.location.id, clock.now);
    for (const job of await atOffice.lease()) await atOffice.submit(job, refused);
    expect((await store.runRetries.pending(accountId, other.id))[0]?.locationId).toBe(lab.location.id);
    expect((await store.runRetries.pending(accountId, same.id))[0]?.locationId).toBe(office.location.id);
    await dispatcher.sweep();
    const atLab = await agentAt(lab);
    expect((await atLab.lease()).map((j) => j.check.id)).toEqual([other.id]);
    expect((await atOffice.lease()).map((j) => j.check.id)).toEqual([same.id]);
  });

  it('drops a planned retry when the check was deactivated meanwhile', async () => {
    const c = await check({ retryStrategy: { type: 'FIXED', baseBackoffSeconds: 0 } });
    const agent = await agentAt(office);
    await dispatcher.enqueue(c, office.location.id, clock.now);
    await agent.submit((await agent.lease())[0]!, refused);
    await store.checks.update(accountId, c.id, { ...c, activated: false });
    await dispatcher.sweep();
    expect(await agent.lease()).toEqual([]);
    expect(await store.runRetries.pending(accountId, c.id)).toEqual([]);
  });
});

describe('groups at dispatch time', () => {
  it("puts the group's settings into the job's definition", async () => {
    const g = await group({
      runtimeId: '2025.04',
      apiCheckDefaults: {
        url: 'http://base.test/api',
        headers: [{ key: 'X-Group', value: 'yes', locked: false }],
        queryParameters: [],
        assertions: [],
        basicAuth: { username: 'u', password: 'p' },
      },
      environmentVariables: [{ key: 'K', value: 'v', locked: false, secret: false }],
    });
    const c = await check({ groupId: g.id, request: { method: 'GET', url: '/status' } });
    const run = await dispatcher.enqueue(c, office.location.id, clock.now);
    const def = run.check as ApiCheckDefinition;
    expect(def).toMatchObject({
      groupId: g.id,
      runtimeId: '2025.04',
      environmentVariables: [{ key: 'K', value: 'v', secret: false }],
    });
    expect(def.request).toMatchObject({
      url: 'http://base.test/api/status',
      headers: [{ key: 'X-Group', value: 'yes' }],
      basicAuth: { username: 'u', password: 'p' },
    });
  });

  it("schedules members at the group's locations, and none of a deactivated group's", async () => {
    const scheduler = new Scheduler({
      store,
      config: loadServiceConfig({ DATA_DIR: dataDir }),
      log: silentLog,
      dispatcher: { enqueueDue: async () => [], cancelRunsOfCheck: async () => 0 },
      placement: (c) => placementOf(store, c),
    });
    // Running, as on the replica that leads: a stopped scheduler keeps no entries.
    await scheduler.start();
    const g = await group({ privateLocations: ['lab'] }, [lab.location.id]);
    const member = await check({ groupId: g.id });
    const loose = await check({ groupId: (await group({})).id }, [office.location.id]);
    await scheduler.checkChanged(accountId, member.id, member);
    await scheduler.checkChanged(accountId, loose.id, loose);
    expect(scheduler.nextDue(member.id).map((d) => d.locationId)).toEqual([lab.location.id]);
    expect(scheduler.nextDue(loose.id).map((d) => d.locationId)).toEqual([office.location.id]);

    await store.checkGroups.update(accountId, g.id, {
      name: 'g',
      activated: false,
      muted: false,
      concurrency: 3,
      locationIds: [lab.location.id],
      body: g.body,
    });
    await scheduler.checkChanged(accountId, member.id, member);
    expect(scheduler.nextDue(member.id)).toEqual([]);

    // On start-up too: a member without locations of its own is found through its group.
    const fresh = new Scheduler({
      store,
      config: loadServiceConfig({ DATA_DIR: dataDir }),
      log: silentLog,
      dispatcher: { enqueueDue: async () => [], cancelRunsOfCheck: async () => 0 },
      placement: (c) => placementOf(store, c),
    });
    const g2 = await group({}, [lab.location.id]);
    const noOwn = await check({ groupId: g2.id }, []);
    await fresh.start();
    expect(fresh.nextDue(noOwn.id).map((d) => d.locationId)).toEqual([lab.location.id]);
    expect(fresh.nextDue(member.id)).toEqual([]);
    await fresh.stop();
    await scheduler.stop();
  });
});
