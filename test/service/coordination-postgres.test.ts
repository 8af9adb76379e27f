/**
 * Coordination of replicas on one PostgreSQL database (src/service/coordination/), against the
 * throwaway cluster of scripts/postgres-test-cluster.sh: advisory-lock leadership and its hand-over
 * when the leader's session ends or its process is SIGKILLed, and LISTEN/NOTIFY run announcements,
 * including the reconnect after the LISTEN connection was terminated.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { randomBytes, randomUUID } from 'node:crypto';
import { once } from 'node:events';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { rmSync } from 'node:fs';
import pg from 'pg';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import {
  leadershipKey,
  PostgresLeadership,
  type PostgresLeadershipOptions,
} from '../../src/service/coordination/postgres-leadership.ts';
import { PostgresRunSignals } from '../../src/service/coordination/postgres-signals.ts';
import type { Leadership, RunSignalListener, RunSignals } from '../../src/service/coordination/types.ts';
import { buildService, type Service } from '../../src/service/app.ts';
import { loadServiceConfig } from '../../src/service/config.ts';
import { Dispatcher } from '../../src/service/dispatch/dispatcher.ts';
import type { Announced } from '../../src/service/dispatch/waiters.ts';
import { type Harness, silentLog, startHarness } from '../helpers/dispatch-harness.ts';
import { tempDataDir } from '../helpers/public-api.ts';
import { accountWithCheck } from '../support/fresh-account.ts';
import { createTestDatabase, postgresAvailable, type TestDatabase } from '../support/postgres.ts';

const quiet = { info() {}, warn() {}, error() {} };
const HOLDER = path.join(import.meta.dirname, 'fixtures', 'hold-leadership.ts');
const API: Announced = { checkType: 'API', checkClass: 'uptime' };

let db: TestDatabase;
const closers: Array<() => Promise<void> | void> = [];

async function sql<T extends pg.QueryResultRow>(text: string, values: unknown[] = []): Promise<T[]> {
  const client = new pg.Client({ connectionString: db.url });
  await client.connect();
  try {
    return (await client.query<T>(text, values)).rows;
  } finally {
    await client.end();
  }
}

/** Quick timings so tests take milliseconds; the SIGKILL test uses the service's defaults. */
function leadership(name: string, opts: Partial<PostgresLeadershipOptions> = {}): PostgresLeadership {
  const l = new PostgresLeadership({
    url: db.url,
    name,
    log: quiet,
    retryMs: 50,
    confirmMs: 50,
    confirmTimeoutMs: 1000,
    handoverDelayMs: 200,
    ...opts,
  });
  closers.push(() => l.close());
  return l;
}

/** A replica's signals, listening. */
async function listening(): Promise<PostgresRunSignals> {
  const s = new PostgresRunSignals({ url: db.url, log: quiet, reconnectMs: 50 });
  closers.push(() => s.close());
  await s.start();
  return s;
}

function acquired(l: Leadership): Promise<number> {
  return new Promise((resolve) => l.onAcquire(() => resolve(performance.now())));
}

/** Resolves after `n` tries for the lock, with whether each took it. */
function attempts(l: PostgresLeadership, n: number): Promise<boolean[]> {
  const seen: boolean[] = [];
  return new Promise((resolve) => {
    const onAttempt = (locked: boolean): void => {
      seen.push(locked);
      if (seen.length < n) return;
      l.events.off('attempt', onAttempt);
      resolve(seen);
    };
    l.events.on('attempt', onAttempt);
  });
}

/** Starts `a` and waits until it leads, then starts `b` and waits until its first try is refused. */
async function leaderThenRefused(a: PostgresLeadership, b: PostgresLeadership): Promise<void> {
  const aLeads = acquired(a);
  await a.start();
  await aLeads;
  const bRefused = attempts(b, 1);
  await b.start();
  expect(await bRefused).toEqual([false]);
}

function next<K extends keyof RunSignalListener>(
  s: RunSignals,
  event: K,
): Promise<Parameters<NonNullable<RunSignalListener[K]>>> {
  return new Promise((resolve) => {
    const off = s.subscribe({
      [event]: (...args: Parameters<NonNullable<RunSignalListener[K]>>) => {
        off();
        resolve(args);
      },
    });
  });
}

/** The sessions holding the advisory lock of leadership `name` (a bigint key: classid high 32 bits, objid low). */
function lockHolders(name: string): Promise<Array<{ pid: number }>> {
  return sql(
    `SELECT pid FROM pg_locks WHERE locktype = 'advisory' AND granted AND objsubid = 1
       AND database = (SELECT oid FROM pg_database WHERE datname = current_database())
       AND ((classid::bigint << 32) | objid::bigint) = $1::bigint`,
    [leadershipKey(name)],
  );
}

describe.skipIf(!postgresAvailable())('coordination on PostgreSQL', () => {
  beforeAll(async () => {
    db = await createTestDatabase();
  });
  afterEach(async () => {
    for (const close of closers.splice(0).reverse()) await close();
  });
  afterAll(async () => {
    await db?.drop();
  });

  describe('leadership', () => {
    it('of two replicas on one database exactly one leads; the other keeps trying and is refused', async () => {
      const name = `leader-${randomUUID()}`;
      const a = leadership(name);
      const b = leadership(name);
      await leaderThenRefused(a, b);
      // And the ones after.
      expect(await attempts(b, 2)).toEqual([false, false]);
      expect([a.isLeader, b.isLeader]).toEqual([true, false]);
      expect(await lockHolders(name)).toEqual([{ pid: expect.any(Number) }]);
    });

    it("hands over when the leader's session is terminated, the old leader's work stopped before the new one's starts", async () => {
      const name = `leader-${randomUUID()}`;
      const order: string[] = [];
      // a, once it lost, does not try again within the test: a recovered old leader may win the lock
      // back as fairly as b, which would leave nothing to hand over.
      const a = leadership(name, { retryMs: 60_000 });
      const b = leadership(name);
      for (const [id, l] of [['a', a] as const, ['b', b] as const]) {
        l.onAcquire(() => {
          order.push(`${id} started`);
        });
        l.onLose(async () => {
          // Draining takes a moment, as a worker finishing its item in hand would.
          await new Promise((resolve) => setImmediate(resolve));
          order.push(`${id} stopped`);
        });
      }
      await leaderThenRefused(a, b);
      const bLeads = acquired(b);
      const [holder] = await lockHolders(name);
      const t0 = performance.now();
      await sql('SELECT pg_terminate_backend($1)', [holder!.pid]);
      const handOverMs = (await bLeads) - t0;
      expect(order).toEqual(['a started', 'a stopped', 'b started']);
      expect(a.isLeader).toBe(false);
      // b's retry (50 ms) plus its hand-over delay (200 ms), with room for a busy machine.
      expect(handOverMs).toBeGreaterThanOrEqual(200);
      expect(handOverMs).toBeLessThan(3000);
    });

    it('hands over within seconds when the leading process is SIGKILLed (service default timings)', async () => {
      const name = `leader-${randomUUID()}`;
      const child: ChildProcess = spawn(process.execPath, [HOLDER, db.url, name], {
        stdio: ['ignore', 'pipe', 'inherit'],
      });
      closers.push(() => {
        if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
      });
      const lines = createInterface({ input: child.stdout! });
      const [line] = (await once(lines, 'line')) as [string];
      expect(line).toBe('leading');

      // The service's defaults: retry every 1 s, confirm every 1 s, hand-over delay 3 s.
      const b = new PostgresLeadership({ url: db.url, name, log: quiet });
      closers.push(() => b.close());
      const bRefused = attempts(b, 1);
      await b.start();
      expect(await bRefused).toEqual([false]);
      const bLeads = acquired(b);
      const t0 = performance.now();
      child.kill('SIGKILL');
      const handOverMs = (await bLeads) - t0;
      console.info(`leadership hand-over after SIGKILL of the leader: ${Math.round(handOverMs)} ms`);
      expect(handOverMs).toBeGreaterThanOrEqual(3000);
      expect(handOverMs).toBeLessThan(6000);
    });

    it('a replica whose leader work cannot start gives the leadership up, and another takes it', async () => {
      const name = `leader-${randomUUID()}`;
      const a = leadership(name, { retryMs: 60_000 });
      const b = leadership(name);
      const aStopped = new Promise<void>((resolve) => a.onLose(() => resolve()));
      a.onAcquire(() => {
        throw new Error('the scheduler cannot load its checks');
      });
      await a.start();
      const bLeads = acquired(b);
      await b.start();
      await aStopped;
      await bLeads;
      expect(a.isLeader).toBe(false);
      expect(await lockHolders(name)).toHaveLength(1);
    });

    it('close stops the leader work first, then frees the lock for the next replica', async () => {
      const name = `leader-${randomUUID()}`;
      const a = leadership(name);
      let aWorking = false;
      a.onAcquire(() => {
        aWorking = true;
      });
      a.onLose(() => {
        aWorking = false;
      });
      const b = leadership(name);
      await leaderThenRefused(a, b);
      const bLeads = acquired(b);
      await a.close();
      expect(aWorking).toBe(false);
      await bLeads;
      expect(await lockHolders(name)).toHaveLength(1);
    });
  });

  describe('run signals', () => {
    it('an announcement on one replica wakes the other, and each replica hears its own once', async () => {
      const [a, b] = [await listening(), await listening()];
      const heardOnA: string[] = [];
      a.subscribe({ announced: (locationId) => heardOnA.push(locationId) });
      const onB = next(b, 'announced');
      a.announce('loc-a', [API, API, { checkType: 'BROWSER', checkClass: 'heavy' }]);
      // One entry per kind of run: enough to wake the waiters that could take one.
      expect(await onB).toEqual(['loc-a', [API, { checkType: 'BROWSER', checkClass: 'heavy' }]]);
      // Notifications arrive in commit order: a's own (if it were not filtered) would come before b's.
      const bAnnouncedOnA = new Promise<void>((resolve) =>
        a.subscribe({ announced: (l) => l === 'loc-b' && resolve() }),
      );
      b.announce('loc-b', [API]);
      await bAnnouncedOnA;
      expect(heardOnA).toEqual(['loc-a', 'loc-b']);
    });

    it('a check change reaches the other replicas, not the one that made it', async () => {
      const [a, b] = [await listening(), await listening()];
      const onA = next(a, 'checkChanged');
      const onB = next(b, 'checkChanged');
      a.checkChanged('acc-1', 'check-1');
      expect(await onB).toEqual(['acc-1', 'check-1']);
      b.checkChanged('acc-2', 'check-2');
      expect(await onA).toEqual(['acc-2', 'check-2']);
    });

    it("work queued on one replica reaches the others (the leader's worker looks now), not the one that queued it", async () => {
      const [a, b] = [await listening(), await listening()];
      const onA = next(a, 'workQueued');
      const onB = next(b, 'workQueued');
      a.workQueued('alerts');
      expect(await onB).toEqual(['alerts']);
      b.workQueued('notifications');
      expect(await onA).toEqual(['notifications']);
    });

    it('after its LISTEN connection is terminated, a replica listens again and wakes every waiter once', async () => {
      const [a, b] = [await listening(), await listening()];
      const missedOnB = next(b, 'missed');
      const terminated = await sql<{ pid: number }>(
        "SELECT pg_terminate_backend(pid), pid FROM pg_stat_activity WHERE application_name = 'outpost listen' AND datname = current_database()",
      );
      expect(terminated).toHaveLength(2);
      await missedOnB;
      // Listening again: announcements arrive as before.
      const onB = next(b, 'announced');
      a.announce('loc-after', [API]);
      expect(await onB).toEqual(['loc-after', [API]]);
    });

    it('ignores a notification on its channel that is not one of ours', async () => {
      const b = await listening();
      const heard: string[] = [];
      b.subscribe({ announced: (l) => heard.push(l) });
      const onB = next(b, 'announced');
      await sql("SELECT pg_notify('outpost_runs', 'not json'), pg_notify('outpost_runs', '{\"locationId\":1}')");
      const a = await listening();
      a.announce('loc-real', [API]);
      await onB;
      expect(heard).toEqual(['loc-real']);
    });
  });

  describe('dispatchers of two replicas', () => {
    /** Replica A is the harness's dispatcher; B a second dispatcher on the same store, with its own signals. */
    async function twoReplicas(signalsOfA?: RunSignals) {
      const h: Harness = await startHarness({ signals: signalsOfA });
      closers.push(() => h.close());
      const signalsOfB = await listening();
      const b = new Dispatcher({ store: h.store, config: h.config, log: silentLog, signals: signalsOfB });
      closers.push(() => b.stop());
      const tenant = await h.tenant();
      const agent = await h.agent(tenant);
      const check = await h.check(tenant);
      // The agent's long-poll is held by replica B.
      const held = b.lease(tenant.location, {
        agentId: agent.agentId,
        slots: { uptime: 1, heavy: 0 },
        waitSeconds: 20,
      });
      await vi.waitFor(() => expect(b.waitingRequests).toBe(1));
      return { h, b, tenant, check, held };
    }

    it('a run enqueued on one replica wakes the long-poll held by the other at once', async () => {
      const { h, tenant, check, held } = await twoReplicas(await listening());
      const t0 = performance.now();
      const run = await h.dispatcher.enqueue(check, tenant.location.id, Date.now());
      const { jobs } = await held;
      expect(jobs.map((j) => j.runId)).toEqual([run.runId]);
      // Woken, not answered at the end of its 20 s wait.
      expect(performance.now() - t0).toBeLessThan(2000);
    });

    it('a long-poll whose announcement was lost while the LISTEN connection was down is woken when it listens again', async () => {
      // A announces in-process only: B never hears of this run, as if its notification fell into the gap.
      const { h, tenant, check, held } = await twoReplicas();
      const run = await h.dispatcher.enqueue(check, tenant.location.id, Date.now());
      const terminated = await sql(
        "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = 'outpost listen' AND datname = current_database()",
      );
      expect(terminated).toHaveLength(1);
      const { jobs } = await held;
      expect(jobs.map((j) => j.runId)).toEqual([run.runId]);
    });
  });

  describe('services', () => {
    // Replicas of one database share its secrets key (each would otherwise make its own key file and
    // the second refuse to start: the key does not open what the first sealed).
    const secretsKey = randomBytes(32).toString('base64');
    async function serviceOnDatabase(): Promise<{ service: Service; checkId: string }> {
      const dataDir = tempDataDir();
      const env = { DATA_DIR: dataDir, PORT: '0', HOST: '127.0.0.1', SECRETS_KEY: secretsKey };
      const config = { ...loadServiceConfig(env), database: { kind: 'postgres' as const, url: db.url } };
      const service = await buildService(config, { logger: false });
      closers.push(() => rmSync(dataDir, { recursive: true, force: true }));
      // The same schedulable check in each service's store, so whose scheduler runs shows.
      const { check } = await accountWithCheck(service.store);
      return { service, checkId: check.id };
    }

    it("of two services one runs the leader work; stopping it hands the work to the other (the service's timings)", {
      timeout: 60_000,
    }, async () => {
      const first = await serviceOnDatabase();
      const second = await serviceOnDatabase();
      let firstStopped = false;
      closers.push(() => second.service.stop());
      closers.push(() => (firstStopped ? undefined : first.service.stop()));
      const firstLeads = acquired(first.service.coordination.leadership);
      await first.service.start();
      await firstLeads;
      await second.service.start();
      const secondRefused = attempts(second.service.coordination.leadership as PostgresLeadership, 1);
      expect(await secondRefused).toEqual([false]);
      expect(first.service.scheduler.nextDue(first.checkId)).toHaveLength(1);
      expect(second.service.scheduler.nextDue(second.checkId)).toHaveLength(0);

      const secondLeads = acquired(second.service.coordination.leadership);
      await first.service.stop();
      firstStopped = true;
      expect(first.service.scheduler.nextDue(first.checkId)).toHaveLength(0);
      await secondLeads;
      expect(second.service.scheduler.nextDue(second.checkId)).toHaveLength(1);
    });
  });
});
