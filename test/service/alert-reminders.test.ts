/**
 * Reminders of a standing alert: results go through the agent API and the dispatcher into a real
 * SQLite store, and the reminder sweep runs on the dispatcher's clock, which the test moves.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ReminderSweeper } from '../../src/service/alerting/reminders.ts';
import type { CheckAlertRecord } from '../../src/service/store/check-status-types.ts';
import { openDatabase } from '../../src/service/store/sqlite/db.ts';
import { openSqliteStore } from '../../src/service/store/sqlite/index.ts';
import type { Store, StoredCheck } from '../../src/service/store/store.ts';
import type { RunResult } from '../../src/shared/protocol.ts';
import { alertHistory, answerRun } from '../helpers/alert-history.ts';
import { type Harness, silentLog, startHarness, type TestAgent, type TestTenant } from '../helpers/dispatch-harness.ts';

const MIN = 60_000;
let h: Harness;
let tenant: TestTenant;
let agent: TestAgent;
let raised: CheckAlertRecord[][];
let sweeper: ReminderSweeper;

const failed: Partial<RunResult> = { hasFailures: true, responseTime: 40, error: 'status 500' };
const degraded: Partial<RunResult> = { isDegraded: true, responseTime: 900 };
const passed: Partial<RunResult> = { responseTime: 7 };

const sweeperOn = (store: Store) =>
  new ReminderSweeper({
    store,
    log: silentLog,
    now: () => h.clock.now,
    onAlertsRaised: (alerts) => raised.push(alerts),
  });

beforeEach(async () => {
  h = await startHarness();
  tenant = await h.tenant();
  agent = await h.agent(tenant);
  raised = [];
  sweeper = sweeperOn(h.store);
});

afterEach(async () => {
  await sweeper.stop();
  await h.close();
});

const runOnce = (check: StoredCheck, result: Partial<RunResult>) => answerRun(h, agent, check, result);
const alerts = (checkId: string) => alertHistory(h.store, tenant.accountId, checkId);

const checkWithReminders = (amount: number, interval: number) =>
  h.check(tenant, {
    body: {
      name: 'Homepage',
      request: { method: 'GET', url: 'http://127.0.0.1:9/' },
      alertSettings: {
        escalationType: 'RUN_BASED',
        runBasedEscalation: { failedRunThreshold: 1 },
        reminders: { amount, interval },
      },
      useGlobalAlertSettings: false,
    },
  });

describe('reminders', () => {
  it('reminds at alert time + n × interval until amount are sent, each once, with the facts of the alert it reminds of', async () => {
    const check = await checkWithReminders(2, 5);
    await runOnce(check, failed);
    const [failure] = await alerts(check.id);
    expect(failure?.alertType).toBe('ALERT_FAILURE');
    const alertedAt = h.clock.now;

    h.clock.now = alertedAt + 5 * MIN - 1;
    expect(await sweeper.sweep()).toEqual([]);
    h.clock.now = alertedAt + 5 * MIN;
    const [first] = await sweeper.sweep();
    expect(first).toMatchObject({
      alertType: 'ALERT_FAILURE_REMAIN',
      runLocation: failure?.runLocation,
      error: 'status 500',
      resultId: failure?.resultId,
      startedAt: failure?.startedAt,
      createdAt: new Date(alertedAt + 5 * MIN).toISOString(),
    });
    expect(raised).toEqual([[first]]);
    // Swept again at the same time: nothing more is due.
    expect(await sweeper.sweep()).toEqual([]);
    h.clock.now = alertedAt + 10 * MIN;
    expect((await sweeper.sweep()).map((a) => a.alertType)).toEqual(['ALERT_FAILURE_REMAIN']);
    h.clock.now = alertedAt + 60 * MIN;
    expect(await sweeper.sweep()).toEqual([]);
    expect((await alerts(check.id)).map((a) => a.alertType)).toEqual([
      'ALERT_FAILURE',
      'ALERT_FAILURE_REMAIN',
      'ALERT_FAILURE_REMAIN',
    ]);
    expect((await h.store.checkStatuses.get(tenant.accountId, check.id))?.alert.remindersSent).toBe(2);
  });

  it('a service back after several intervals sends one reminder, not a burst of the missed ones', async () => {
    const check = await checkWithReminders(5, 5);
    await runOnce(check, failed);
    h.clock.now += 17 * MIN;
    expect(await sweeper.sweep()).toHaveLength(1);
    expect(await sweeper.sweep()).toEqual([]);
    expect((await h.store.checkStatuses.get(tenant.accountId, check.id))?.alert.remindersSent).toBe(3);
  });

  it('a degraded check is reminded with ALERT_DEGRADED_REMAIN; a transition resets the count', async () => {
    const check = await checkWithReminders(1, 5);
    await runOnce(check, degraded);
    h.clock.now += 5 * MIN;
    expect((await sweeper.sweep()).map((a) => a.alertType)).toEqual(['ALERT_DEGRADED_REMAIN']);
    await runOnce(check, failed);
    h.clock.now += 5 * MIN;
    expect((await sweeper.sweep()).map((a) => a.alertType)).toEqual(['ALERT_FAILURE_REMAIN']);
    expect((await alerts(check.id)).map((a) => a.alertType)).toEqual([
      'ALERT_DEGRADED',
      'ALERT_DEGRADED_REMAIN',
      'ALERT_DEGRADED_FAILURE',
      'ALERT_FAILURE_REMAIN',
    ]);
  });

  it('a check now passing, deleted, or whose reminders were turned off gets nothing', async () => {
    const recovered = await checkWithReminders(3, 5);
    await runOnce(recovered, failed);
    await runOnce(recovered, passed);
    const deleted = await checkWithReminders(3, 5);
    await runOnce(deleted, failed);
    await h.store.checks.delete(tenant.accountId, deleted.id);
    const turnedOff = await checkWithReminders(3, 5);
    await runOnce(turnedOff, failed);
    const { id: _id, accountId: _a, createdAt: _c, updatedAt: _u, ...rest } = turnedOff;
    await h.store.checks.update(tenant.accountId, turnedOff.id, {
      ...rest,
      body: { ...rest.body, alertSettings: { reminders: { amount: 0, interval: 5 } } },
    });
    h.clock.now += 30 * MIN;
    expect(await sweeper.sweep()).toEqual([]);
    expect(raised).toEqual([]);
    expect(await h.store.checkStatuses.nextReminderDue()).toBeNull();
  });

  it('two service replicas on one database send each reminder once', async () => {
    const check = await checkWithReminders(1, 5);
    await runOnce(check, failed);
    const other = await openSqliteStore(h.config.dataDir);
    const replica = sweeperOn(other);
    try {
      h.clock.now += 5 * MIN;
      const [a, b] = await Promise.all([sweeper.sweep(), replica.sweep()]);
      expect([...a, ...b].map((x) => x.alertType)).toEqual(['ALERT_FAILURE_REMAIN']);
      expect((await alerts(check.id)).map((x) => x.alertType)).toEqual(['ALERT_FAILURE', 'ALERT_FAILURE_REMAIN']);
    } finally {
      await replica.stop();
      await other.close();
    }
  });

  it('started, it sends a reminder when due without being driven, and stops', async () => {
    const check = await checkWithReminders(1, 5);
    await runOnce(check, failed);
    h.clock.now += 5 * MIN;
    const sent = new Promise<CheckAlertRecord[]>((resolve) => {
      sweeper = new ReminderSweeper({
        store: h.store,
        log: silentLog,
        now: () => h.clock.now,
        onAlertsRaised: resolve,
      });
    });
    sweeper.start();
    expect((await sent).map((a) => a.alertType)).toEqual(['ALERT_FAILURE_REMAIN']);
    await sweeper.stop();
  });

  it('a check alerting since before the upgrade (migration 014) is reminded too', async () => {
    const check = await checkWithReminders(1, 5);
    await runOnce(check, failed);
    // The database as it was before migration 014 (with this check failing), then opened again.
    const db = openDatabase(h.config.dataDir);
    db.exec(`DROP INDEX check_statuses_next_reminder; ALTER TABLE check_statuses DROP COLUMN next_reminder_at;
      ALTER TABLE check_alerts DROP COLUMN ssl_days_remaining; DROP TABLE results_status_pending; DELETE FROM schema_migrations WHERE version = 14`);
    db.close();
    const upgraded = await openSqliteStore(h.config.dataDir);
    try {
      h.clock.now += 5 * MIN;
      expect((await sweeperOn(upgraded).sweep()).map((a) => a.alertType)).toEqual(['ALERT_FAILURE_REMAIN']);
    } finally {
      await upgraded.close();
    }
  });
});
