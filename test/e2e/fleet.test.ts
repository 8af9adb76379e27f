/**
 * The fleet: PostgreSQL, two `outpost serve` replicas and six agents (three on each replica's URL) on one
 * private location, API checks every 10 s against nginx on loopback. While it runs, the leading replica
 * and two agents are killed with SIGKILL and restarted; later the other replica (leading by then) is
 * stopped with SIGTERM and restarted. Then, for every run due before a cutoff:
 *
 * - it is final: completed with exactly one result, or expired/cancelled with its reason, and only
 *   around a kill or restart;
 * - no result is stored twice, no slot is enqueued twice, and no slot of a (check, location) pair is
 *   missing between its first and last due time (a new leader enqueues the slot nobody enqueued);
 * - due→start p99 (the result's scheduleLagMs) is under 1 s for runs due outside the seconds around
 *   each kill and restart.
 *
 * CI runs a short version (100 checks, 70 s), with every step. The full size:
 *
 *   FLEET_CHECKS=500 FLEET_SECONDS=180 npx vitest run test/e2e/fleet.test.ts
 *
 * FLEET_SIGTERM=0 leaves the SIGTERM step out (test/e2e/rolling-restart.test.ts covers rolling restarts
 * on their own, alerts included).
 *
 * Needs OUTPOST_TEST_DATABASE_URL (test/support/postgres.ts) and nginx.
 */
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { beforeAll, describe, expect, it } from 'vitest';
import { readInteger } from '../../src/shared/env.ts';
import { startNginx } from '../agent/tcp-servers.ts';
import { createTestDatabase, postgresAvailable, type TestDatabase } from '../support/postgres.ts';
import { cleanupsAfterAll } from './cleanups.ts';
import {
  Api,
  createAccount,
  freePort,
  isLeading,
  leadsAfter,
  type Proc,
  type Replica,
  startAgent,
  startService,
  tempDir,
  until,
} from './harness.ts';
import { accounting, type Disturbance, warningsOf } from './run-accounting.ts';

const CHECKS = readInteger(process.env, 'FLEET_CHECKS', 100, { min: 1, max: 5000 });
const SECONDS = readInteger(process.env, 'FLEET_SECONDS', 70, { min: 40, max: 3600 });
/** Whether the rolling-restart step (SIGTERM of the leader) runs: see the top of the file. */
const SIGTERM_STEP = process.env.FLEET_SIGTERM !== '0';

const cleanups = cleanupsAfterAll();

describe.skipIf(!postgresAvailable())('a fleet on PostgreSQL', () => {
  let database: TestDatabase;
  let serviceEnv: Record<string, string>;

  beforeAll(async () => {
    database = await createTestDatabase();
    cleanups.push(() => database.drop());
    serviceEnv = {
      DATABASE_URL: database.url,
      SECRETS_KEY: randomBytes(32).toString('base64'),
      LOG_LEVEL: 'INFO',
    };
  });

  /** Every process started, restarts included, for the summary of what they warned about. */
  const everyProc: Array<{ name: string; proc: Proc }> = [];

  async function startReplica(name: string, port: number, dataDir: string): Promise<Replica> {
    const { proc } = await startService({ ...serviceEnv, DATA_DIR: dataDir, PORT: String(port) });
    everyProc.push({ name: `replica ${name}`, proc });
    return { name, port, dataDir, proc };
  }

  const leads = (r: Replica, from?: number) => leadsAfter(r.proc, from);
  const leading = (r: Replica) => isLeading(r.proc);

  it(
    `accounts for every due run of ${CHECKS} checks over ${SECONDS} s through kills and restarts`,
    async () => {
      const nginx = await startNginx();
      cleanups.push(() => nginx.stop());
      const dirs = await Promise.all(['fleet-a', 'fleet-b', 'fleet-agents'].map((p) => tempDir(p)));
      for (const d of dirs) cleanups.push(() => d.remove());
      const [portA, portB] = [await freePort(), await freePort()];
      let a = await startReplica('a', portA, dirs[0]!.dir);
      cleanups.push(() => a.proc.stop('SIGKILL'));
      let b = await startReplica('b', portB, dirs[1]!.dir);
      cleanups.push(() => b.proc.stop('SIGKILL'));
      const api = new Api(`http://127.0.0.1:${portA}`, await createAccount(dirs[0]!.dir, serviceEnv));
      const location = await api.createLocation('fleet');

      const agentEnv = (i: number) => ({
        API_KEY: location.key,
        API_URL: `http://127.0.0.1:${i < 3 ? portA : portB}`,
        SPOOL_DIR: `${dirs[2]!.dir}/spool-${i}`,
        SANDBOX_POOL_SIZE: '0',
        LOG_LEVEL: 'INFO',
      });
      const agents: Proc[] = [];
      const launchAgent = (i: number) => {
        const proc = startAgent(agentEnv(i));
        everyProc.push({ name: `agent ${i}`, proc });
        agents[i] = proc;
        cleanups.push(() => proc.stop('SIGKILL'));
        return proc.waitForLog((l) => l.msg === 'registered; taking work', 60_000);
      };
      await Promise.all([0, 1, 2, 3, 4, 5].map(launchAgent));

      // Whichever replica leads (the other keeps trying the lock).
      await until(async () => (leading(a) || leading(b) ? true : undefined), { what: 'a replica to lead' });
      await api.createApiChecks(
        Array.from({ length: CHECKS }, (_, i) => ({
          name: `fleet ${i}`,
          frequency: 0,
          frequencyOffset: 10,
          privateLocations: ['fleet'],
          request: {
            method: 'GET',
            url: `http://127.0.0.1:${nginx.port}/${i}`,
            assertions: [{ source: 'STATUS_CODE', comparison: 'EQUALS', property: '', target: '200' }],
          },
        })),
      );
      const startedAt = Date.now();
      const disturbances: Disturbance[] = [];
      const waitUntil = (ms: number) => new Promise((r) => setTimeout(r, Math.max(0, startedAt + ms - Date.now())));

      // 1. SIGKILL the leader and two agents (one on each replica's URL), restart them.
      await waitUntil(SECONDS * 250);
      const killedLeader = leading(a) ? a : b;
      const follower = killedLeader === a ? b : a;
      const followerLines = follower.proc.lines.length;
      const killFrom = Date.now();
      await Promise.all([killedLeader.proc.stop('SIGKILL'), agents[1]!.stop('SIGKILL'), agents[4]!.stop('SIGKILL')]);
      const restarted = await startReplica(killedLeader.name, killedLeader.port, killedLeader.dataDir);
      if (killedLeader === a) a = restarted;
      else b = restarted;
      await Promise.all([launchAgent(1), launchAgent(4), leads(follower, followerLines)]);
      disturbances.push({
        from: killFrom,
        to: Date.now(),
        what: `SIGKILL of leader ${killedLeader.name} and agents 1, 4`,
      });

      // 2. SIGTERM the replica that leads now, restart it; the other takes over.
      await waitUntil(SECONDS * 550);
      if (SIGTERM_STEP) await rollingRestartStep();
      async function rollingRestartStep(): Promise<void> {
        const stopped = leading(a) ? a : b;
        const other = stopped === a ? b : a;
        const otherLines = other.proc.lines.length;
        const termFrom = Date.now();
        const code = await stopped.proc.stop('SIGTERM');
        // On failure, what ended it: a signal, its last words.
        const ending = {
          code,
          signal: stopped.proc.child.signalCode,
          stderr: stopped.proc.stderr.slice(-5),
          last: stopped.proc.lines.slice(-5),
        };
        expect(ending).toMatchObject({ code: 0 });
        const back = await startReplica(stopped.name, stopped.port, stopped.dataDir);
        if (stopped === a) a = back;
        else b = back;
        await leads(other, otherLines);
        disturbances.push({ from: termFrom, to: Date.now(), what: `SIGTERM of leader ${stopped.name}` });
      }

      // 3. The cutoff: every run due before it must end up final.
      await waitUntil(SECONDS * 1000);
      const cutoff = new Date().toISOString();
      const db = new pg.Client({ connectionString: database.url });
      await db.connect();
      cleanups.push(() => db.end());
      const open = async () =>
        Number(
          (
            await db.query("SELECT count(*) AS n FROM runs WHERE due_at < $1 AND state IN ('queued', 'leased')", [
              cutoff,
            ])
          ).rows[0].n,
        );
      await until(async () => ((await open()) === 0 ? true : undefined), {
        timeoutMs: 120_000,
        everyMs: 500,
        what: 'every run due before the cutoff to be final',
      });

      const report = await accounting(db, cutoff, startedAt, disturbances);
      const iso = (ms: number) => new Date(ms).toISOString();
      const spans = disturbances.map((d) => ({ what: d.what, from: iso(d.from), to: iso(d.to) }));
      console.log(
        JSON.stringify(
          {
            checks: CHECKS,
            seconds: SECONDS,
            measuredFrom: iso(startedAt),
            cutoff,
            disturbances: spans,
            warnings: warningsOf(everyProc),
            ...report,
          },
          null,
          1,
        ),
      );
      expect(report.byState.queued ?? 0).toBe(0);
      expect(report.byState.leased ?? 0).toBe(0);
      expect(report.completedWithoutOneResult).toEqual([]);
      expect(report.endedWithoutReason).toEqual([]);
      expect(report.endedOutsideDisturbances).toEqual([]);
      expect(report.resultsStoredTwice).toEqual([]);
      expect(report.slotsEnqueuedTwice).toEqual([]);
      expect(report.missingSlots).toEqual([]);
      expect(report.pairs).toBe(CHECKS);
      // Every pair ran for most of the test: the scheduler did not drop any.
      expect(report.byState.completed).toBeGreaterThan(CHECKS * (SECONDS / 10 - 2));
      expect(report.dueToStartMs.outside.count).toBeGreaterThan(CHECKS);
      expect(report.dueToStartMs.outside.p99).toBeLessThan(1000);
    },
    (SECONDS + 240) * 1000,
  );
});
