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
import { awaitLeader, awaitRunsFinal, FleetProcs } from '../support/e2e-replicas.ts';
import { createWebhookChannel } from '../support/e2e-webhook-channel.ts';
import { apiCheck, startFlipTarget } from '../support/nginx-flip.ts';
import { createTestDatabase, postgresAvailable } from '../support/postgres.ts';
import { cleanupsAfterAll } from './cleanups.ts';
import { Api, createAccount, freePort, tempDir, until } from './harness.ts';
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
    const fleet = new FleetProcs(serviceEnv, cleanups);
    const replicas = [
      await fleet.startReplica('a', await freePort(), dirs[0]!.dir),
      await fleet.startReplica('b', await freePort(), dirs[1]!.dir),
    ];
    const api = new Api(`http://127.0.0.1:${replicas[0]!.port}`, await createAccount(dirs[0]!.dir, serviceEnv));
    const location = await api.createLocation('rolling');
    const agents = [0, 1].map((i) =>
      fleet.startAgent(i, location.key, `http://127.0.0.1:${replicas[i]!.port}`, dirs[2]!.dir),
    );
    await Promise.all(agents.map((a) => a.waitForLog((l) => l.msg === 'registered; taking work')));
    await awaitLeader(replicas);

    const names = Array.from({ length: CHECKS }, (_, i) => `rolling-${i}`);
    const checks = await api.createApiChecks(names.map((name) => apiCheck(name, flip, ['rolling'])));
    await createWebhookChannel(api, {
      name: 'rolling hook',
      receiverUrl: receiver.url,
      template: TEMPLATE,
      webhookSecret: SECRET,
      checkIds: checks.map((c) => c.id),
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

    const delivered = (alertType: string) => (r: ReceivedWebhook) =>
      r.answered === 200 && alertOf(r).alertType === alertType && flipped.includes(alertOf(r).checkId);

    /** Flips the first checks to `failing` across a restart of the leader; each alerts `alertType` once. */
    const flipAcrossRestart = async (failing: boolean, alertType: string, what: string) => {
      for (let i = 0; i < FLIPPED; i++) flip.setFailing(names[i]!, failing);
      disturbances.push(await fleet.restartLeader(replicas));
      await receiver.requests.waitFor(FLIPPED, delivered(alertType), ARRIVAL_MS, what);
    };
    await flipAcrossRestart(true, 'ALERT_FAILURE', 'a failure alert of every flipped check');
    await flipAcrossRestart(false, 'ALERT_RECOVERY', 'a recovery alert of every flipped check');

    // The cutoff: one more interval after the last restart, and every run due before it final.
    await new Promise((r) => setTimeout(r, Math.max(0, disturbances.at(-1)!.to + 10_000 - Date.now())));
    const cutoff = new Date().toISOString();
    await awaitRunsFinal(db, cutoff, 60_000);
    const report = await accounting(db, cutoff, startedAt, disturbances);
    const alerts = receiver.requests.items.filter((r) => r.answered === 200).map(alertOf);
    console.log(
      JSON.stringify(
        {
          cutoff,
          disturbances,
          warnings: warningsOf(fleet.everyProc),
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
