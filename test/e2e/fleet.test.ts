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
import { awaitLeader, awaitRunsFinal, FleetProcs } from '../support/e2e-replicas.ts';
import { createTestDatabase, postgresAvailable, type TestDatabase } from '../support/postgres.ts';
import { cleanupsAfterAll } from './cleanups.ts';
import { Api, createAccount, freePorts, isLeading, leadsAfter, type Proc, tempDir } from './harness.ts';
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

  it(
    `accounts for every due run of ${CHECKS} checks over ${SECONDS} s through kills and restarts`,
    async () => {
      const nginx = await startNginx();
      cleanups.push(() => nginx.stop());
      const dirs = await Promise.all(['fleet-a', 'fleet-b', 'fleet-agents'].map((p) => tempDir(p)));
      for (const d of dirs) cleanups.push(() => d.remove());
      const [portA, portB] = (await freePorts(2)) as [number, number];
      const fleet = new FleetProcs(serviceEnv, cleanups);
      const replicas = [
        await fleet.startReplica('a', portA, dirs[0]!.dir),
        await fleet.startReplica('b', portB, dirs[1]!.dir),
      ];
      const api = new Api(`http://127.0.0.1:${portA}`, await createAccount(dirs[0]!.dir, serviceEnv));
      const location = await api.createLocation('fleet');

      const agents: Proc[] = [];
      const launchAgent = (i: number) => {
        agents[i] = fleet.startAgent(i, location.key, `http://127.0.0.1:${i < 3 ? portA : portB}`, dirs[2]!.dir);
        return agents[i].waitForLog((l) => l.msg === 'registered; taking work', 60_000);
      };
      await Promise.all([0, 1, 2, 3, 4, 5].map(launchAgent));

      await awaitLeader(replicas);
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
      const killed = isLeading(replicas[0]!.proc) ? 0 : 1;
      const killedLeader = replicas[killed]!;
      const follower = replicas[1 - killed]!;
      const followerLines = follower.proc.lines.length;
      const killFrom = Date.now();
      await Promise.all([killedLeader.proc.stop('SIGKILL'), agents[1]!.stop('SIGKILL'), agents[4]!.stop('SIGKILL')]);
      replicas[killed] = await fleet.startReplica(killedLeader.name, killedLeader.port, killedLeader.dataDir);
      await Promise.all([launchAgent(1), launchAgent(4), leadsAfter(follower.proc, followerLines)]);
      disturbances.push({
        from: killFrom,
        to: Date.now(),
        what: `SIGKILL of leader ${killedLeader.name} and agents 1, 4`,
      });

      // 2. SIGTERM the replica that leads now, restart it; the other takes over.
      await waitUntil(SECONDS * 550);
      if (SIGTERM_STEP) disturbances.push(await fleet.restartLeader(replicas));

      // 3. The cutoff: every run due before it must end up final.
      await waitUntil(SECONDS * 1000);
      const cutoff = new Date().toISOString();
      const db = new pg.Client({ connectionString: database.url });
      await db.connect();
      cleanups.push(() => db.end());
      await awaitRunsFinal(db, cutoff, 120_000);

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
            warnings: warningsOf(fleet.everyProc),
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
