/**
 * A rolling restart (issue 13): two `outpost serve` replicas on PostgreSQL, two agents (one on each
 * replica's URL), API checks every 10 s against nginx and a signed-webhook alert channel. The leading
 * replica is stopped with SIGTERM and started again, then the other one (leading by then), as
 * Kubernetes does in a rolling update. Half the checks fail from just before the first restart until
 * just before the second, so their failure and recovery alerts are raised and delivered while a
 * replica is down or has just handed over.
 *
 * Nothing may be lost: every run due before the cutoff completed with exactly one result (none expired
 * or cancelled), no slot enqueued twice or missing, each failure and recovery delivered exactly once,
 * and both replicas ended with exit code 0.
 *
 * Needs OUTPOST_TEST_DATABASE_URL (test/support/postgres.ts) and nginx.
 */
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { type ReceivedWebhook, startWebhookReceiver } from '../support/alert-receivers.ts';
import { apiCheck, startFlipTarget } from '../support/nginx-flip.ts';
import { createTestDatabase, postgresAvailable } from '../support/postgres.ts';
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

const CHECKS = 20;
const FLIPPED = 10;
const SECRET = 'whsec-rolling-0123456789abcdef';
const TEMPLATE = JSON.stringify({ alertType: '{{ALERT_TYPE}}', checkId: '{{CHECK_ID}}' });
/** Alerts arrive within this of the result that raised them (a replica may be restarting meanwhile). */
const ARRIVAL_MS = 60_000;

const cleanups = cleanupsAfterAll();

const alertOf = (r: ReceivedWebhook) => r.json as { alertType: string; checkId: string };

describe.skipIf(!postgresAvailable())('a rolling restart of two replicas on PostgreSQL', () => {
  it('loses no run, no result and no notification', { timeout: 300_000 }, async () => {
    const database = await createTestDatabase();
    cleanups.push(() => database.drop());
    const flip = await startFlipTarget();
    cleanups.push(() => flip.stop());
    const receiver = await startWebhookReceiver(SECRET);
    cleanups.push(() => receiver.close());
    const dirs = await Promise.all(['rolling-a', 'rolling-b', 'rolling-agents'].map((p) => tempDir(p)));
    for (const d of dirs) cleanups.push(() => d.remove());
    const serviceEnv = {
      DATABASE_URL: database.url,
      SECRETS_KEY: randomBytes(32).toString('base64'),
      OUTBOUND_ALLOW: '127.0.0.1',
      NOTIFY_POLL_MS: '500',
      NOTIFY_BACKOFF_BASE_MS: '500',
    };
    const everyProc: Array<{ name: string; proc: Proc }> = [];
    const startReplica = async (name: string, port: number, dataDir: string): Promise<Replica> => {
      const { proc } = await startService({ ...serviceEnv, DATA_DIR: dataDir, PORT: String(port) });
      everyProc.push({ name: `replica ${name}`, proc });
      cleanups.push(() => proc.stop('SIGKILL'));
      return { name, port, dataDir, proc };
    };
    const replicas = [
      await startReplica('a', await freePort(), dirs[0]!.dir),
      await startReplica('b', await freePort(), dirs[1]!.dir),
    ];
    const api = new Api(`http://127.0.0.1:${replicas[0]!.port}`, await createAccount(dirs[0]!.dir, serviceEnv));
    const location = await api.createLocation('rolling');
    const agents = [0, 1].map((i) => {
      const proc = startAgent({
        API_KEY: location.key,
        API_URL: `http://127.0.0.1:${replicas[i]!.port}`,
        SPOOL_DIR: `${dirs[2]!.dir}/spool-${i}`,
        SANDBOX_POOL_SIZE: '0',
        LOG_LEVEL: 'INFO',
      });
      everyProc.push({ name: `agent ${i}`, proc });
      cleanups.push(() => proc.stop('SIGKILL'));
      return proc;
    });
    await Promise.all(agents.map((a) => a.waitForLog((l) => l.msg === 'registered; taking work')));
    await until(async () => (replicas.some((r) => isLeading(r.proc)) ? true : undefined), {
      what: 'a replica to lead',
    });

    const names = Array.from({ length: CHECKS }, (_, i) => `rolling-${i}`);
    const checks = await api.createApiChecks(names.map((name) => apiCheck(name, flip, ['rolling'])));
    await api.ok('POST', '/v1/alert-channels', {
      type: 'WEBHOOK',
      config: {
        name: 'rolling hook',
        url: `${receiver.url}/hook`,
        method: 'POST',
        template: TEMPLATE,
        webhookSecret: SECRET,
        headers: [],
        queryParameters: [],
      },
      subscriptions: checks.map((c) => ({ checkId: c.id, activated: true })),
    });
    const db = new pg.Client({ connectionString: database.url });
    await db.connect();
    cleanups.push(() => db.end());
    const completedPairs = async () =>
      Number((await db.query("SELECT count(DISTINCT check_id) AS n FROM runs WHERE state = 'completed'")).rows[0].n);
    await until(async () => ((await completedPairs()) === CHECKS ? true : undefined), {
      what: 'a result of every check',
    });
    const startedAt = Date.now();
    const flipped = checks.slice(0, FLIPPED).map((c) => c.id);
    const disturbances: Disturbance[] = [];

    /** SIGTERM of the leading replica, its start on the same port, and the other leading. */
    const restartLeader = async () => {
      const index = replicas.findIndex((r) => isLeading(r.proc));
      const stopped = replicas[index]!;
      const other = replicas[1 - index]!;
      const otherLines = other.proc.lines.length;
      const from = Date.now();
      const code = await stopped.proc.stop('SIGTERM');
      const ending = {
        replica: stopped.name,
        code,
        signal: stopped.proc.child.signalCode,
        stderr: stopped.proc.stderr.slice(-5),
        last: stopped.proc.lines.slice(-5),
      };
      expect(ending).toMatchObject({ code: 0 });
      replicas[index] = await startReplica(stopped.name, stopped.port, stopped.dataDir);
      await leadsAfter(other.proc, otherLines);
      disturbances.push({ from, to: Date.now(), what: `SIGTERM of leader ${stopped.name}` });
    };
    const delivered = (alertType: string) => (r: ReceivedWebhook) =>
      r.answered === 200 && alertOf(r).alertType === alertType && flipped.includes(alertOf(r).checkId);

    for (let i = 0; i < FLIPPED; i++) flip.setFailing(names[i]!, true);
    await restartLeader();
    await receiver.requests.waitFor(
      FLIPPED,
      delivered('ALERT_FAILURE'),
      ARRIVAL_MS,
      'a failure alert of every flipped check',
    );
    for (let i = 0; i < FLIPPED; i++) flip.setFailing(names[i]!, false);
    await restartLeader();
    await receiver.requests.waitFor(
      FLIPPED,
      delivered('ALERT_RECOVERY'),
      ARRIVAL_MS,
      'a recovery alert of every flipped check',
    );

    // The cutoff: one more interval after the last restart, and every run due before it final.
    await new Promise((r) => setTimeout(r, Math.max(0, disturbances.at(-1)!.to + 10_000 - Date.now())));
    const cutoff = new Date().toISOString();
    const open = async () =>
      Number(
        (await db.query("SELECT count(*) AS n FROM runs WHERE due_at < $1 AND state IN ('queued', 'leased')", [cutoff]))
          .rows[0].n,
      );
    await until(async () => ((await open()) === 0 ? true : undefined), {
      timeoutMs: 60_000,
      everyMs: 500,
      what: 'every run due before the cutoff to be final',
    });
    const report = await accounting(db, cutoff, startedAt, disturbances);
    const alerts = receiver.requests.items.filter((r) => r.answered === 200).map(alertOf);
    console.log(
      JSON.stringify(
        {
          cutoff,
          disturbances,
          warnings: warningsOf(everyProc),
          byState: report.byState,
          ended: report.ended,
          dueToStartMs: report.dueToStartMs,
        },
        null,
        1,
      ),
    );

    expect(report.byState).toEqual({ completed: expect.any(Number) });
    expect(report.completedWithoutOneResult).toEqual([]);
    expect(report.resultsStoredTwice).toEqual([]);
    expect(report.slotsEnqueuedTwice).toEqual([]);
    expect(report.missingSlots).toEqual([]);
    expect(report.pairs).toBe(CHECKS);
    // Each flipped check alerted once on failure and once on recovery; the others never.
    const expected = flipped.flatMap((checkId) => [`${checkId} ALERT_FAILURE`, `${checkId} ALERT_RECOVERY`]).sort();
    expect(alerts.map((a) => `${a.checkId} ${a.alertType}`).sort()).toEqual(expected);
    expect([...receiver.deliveredCounts().values()].every((n) => n === 1)).toBe(true);
  });
});
