/**
 * Check statuses and check alerts at store level, on SQLite and PostgreSQL: the state machine's
 * transaction (applyResult, applyReminder), the reads, and two stores (two connections, as two
 * service replicas) applying results of one check at the same time.
 */
import { describe, expect, it } from 'vitest';
import type { CheckAlertRecord } from '../../src/service/store/check-status-types.ts';
import {
  addCheck,
  failedRun,
  newAlert,
  raiseAlert,
  seedTenant,
  storePending,
  type Tenant,
} from '../support/alerting-fixtures.ts';
import { freshDatabaseEachTest } from '../support/fresh-account.ts';
import { type FreshStore, storeBackends } from '../support/store-backends.ts';

const T0 = '2026-11-23T09:00:00.000Z';
const at = (minutes: number) => new Date(Date.parse(T0) + minutes * 60_000).toISOString();

describe.each(storeBackends())('check statuses on $name', (backend) => {
  const fresh = freshDatabaseEachTest(backend);

  describe('applyResult', () => {
    it('writes the first status and its alert, clears the pending mark, and applies a result once', async () => {
      const store = await fresh.open();
      const t = await seedTenant(store);
      const resultId = await storePending(store, t, at(0));
      const seen: CheckAlertRecord[] = [];
      const applied = await store.checkStatuses.applyResult(
        t.accountId,
        t.check.id,
        resultId,
        at(0),
        (prev) => {
          expect(prev).toBeUndefined();
          return failedRun(prev, resultId, at(0), 'ALERT_FAILURE');
        },
        (alert) => {
          seen.push(alert);
        },
      );
      expect(applied?.status).toMatchObject({
        checkId: t.check.id,
        name: 'Home',
        hasFailures: true,
        createdAt: at(0),
        updatedAt: at(0),
      });
      expect(applied?.alerts).toEqual(seen);
      expect(seen).toEqual([
        expect.objectContaining({
          id: expect.any(Number),
          accountId: t.accountId,
          checkId: t.check.id,
          alertType: 'ALERT_FAILURE',
          createdAt: at(0),
        }),
      ]);
      expect(await store.results.listStatusPending({ limit: 10 })).toEqual([]);

      const again = await store.checkStatuses.applyResult(t.accountId, t.check.id, resultId, at(1), (prev) =>
        failedRun(prev, resultId, at(1)),
      );
      expect(again).toBeNull();
      expect(await store.checkStatuses.get(t.accountId, t.check.id)).toMatchObject({
        lastCheckRunId: resultId,
        alert: { consecutiveFailedRuns: 1 },
        longestRun: 1,
        shortestRun: 1,
        lastRunLocation: 'office',
      });
    });

    it('applies a batch in one transaction: results of one check in order, each from the one before; one no longer pending skipped', async () => {
      const store = await fresh.open();
      const t = await seedTenant(store);
      const other = await addCheck(store, t.accountId, t.locationId, 'Other');
      const applied = await storePending(store, t, at(0));
      await store.checkStatuses.applyResult(t.accountId, t.check.id, applied, at(0), (prev) =>
        failedRun(prev, applied, at(0)),
      );
      const [first, second, third] = [
        await storePending(store, t, at(1)),
        await storePending(store, t, at(2)),
        await storePending(store, t, at(2), other),
      ];
      const item = (checkId: string, resultId: string, minute: number) => ({
        accountId: t.accountId,
        checkId,
        resultId,
        at: at(minute),
        compute: (prev: Parameters<typeof failedRun>[0]) => failedRun(prev, resultId, at(minute)),
      });
      const out = await store.checkStatuses.applyResults([
        item(t.check.id, first as string, 1),
        item(t.check.id, applied, 1),
        item(other.id, third as string, 2),
        item(t.check.id, second as string, 2),
      ]);
      expect(out.map((o) => o?.status.alert.consecutiveFailedRuns ?? null)).toEqual([2, null, 1, 3]);
      expect(out[3]?.status).toMatchObject({ name: 'Home', createdAt: at(0), updatedAt: at(2) });
      expect(out[2]?.status).toMatchObject({ name: 'Other', createdAt: at(2) });
      expect(await store.checkStatuses.get(t.accountId, t.check.id)).toMatchObject({
        lastCheckRunId: second,
        alert: { consecutiveFailedRuns: 3 },
      });
      expect(await store.results.listStatusPending({ limit: 10 })).toEqual([]);
    });

    it('updates the existing status from the previous one', async () => {
      const store = await fresh.open();
      const t = await seedTenant(store);
      for (const minute of [0, 1, 2]) {
        const resultId = await storePending(store, t, at(minute));
        await store.checkStatuses.applyResult(t.accountId, t.check.id, resultId, at(minute), (prev) =>
          failedRun(prev, resultId, at(minute)),
        );
      }
      expect(await store.checkStatuses.get(t.accountId, t.check.id)).toMatchObject({
        alert: { consecutiveFailedRuns: 3, state: 'FAILING' },
        createdAt: at(0),
        updatedAt: at(2),
      });
    });

    it('writes nothing when compute says so, and rolls back everything when withAlert throws', async () => {
      const store = await fresh.open();
      const t = await seedTenant(store);
      const resultId = await storePending(store, t, at(0));
      expect(await store.checkStatuses.applyResult(t.accountId, t.check.id, resultId, at(0), () => null)).toBeNull();
      expect(await store.checkStatuses.get(t.accountId, t.check.id)).toBeUndefined();

      const other = await storePending(store, t, at(1));
      const failing = store.checkStatuses.applyResult(
        t.accountId,
        t.check.id,
        other,
        at(1),
        (prev) => failedRun(prev, other, at(1), 'ALERT_FAILURE'),
        () => {
          throw new Error('the notifier is down');
        },
      );
      await expect(failing).rejects.toThrow('the notifier is down');
      expect(await store.checkStatuses.get(t.accountId, t.check.id)).toBeUndefined();
      expect(await store.checkAlerts.list(t.accountId, { from: at(0), to: at(10), limit: 10, page: 1 })).toEqual([]);
      expect((await store.results.listStatusPending({ limit: 10 })).map((r) => r.id)).toEqual([other]);
    });
  });

  it('get and list: a check without a counted result has an empty status, in creation order', async () => {
    const store = await fresh.open();
    const t = await seedTenant(store);
    const second = await addCheck(store, t.accountId, t.locationId, 'Second');
    await raiseAlert(store, t, at(0), 'ALERT_FAILURE', second);
    const other = await seedTenant(store, 'Other');
    await raiseAlert(store, other, at(0));

    const list = await store.checkStatuses.list(t.accountId);
    expect(list.map((s) => [s.name, s.hasFailures, s.updatedAt])).toEqual([
      ['Home', false, null],
      ['Second', true, at(0)],
    ]);
    expect(list[0]).toMatchObject({
      checkId: t.check.id,
      accountId: t.accountId,
      lastCheckRunId: null,
      alert: { state: 'PASSING' },
    });
    expect(await store.checkStatuses.get(t.accountId, t.check.id)).toBeUndefined();
    expect(await store.checkStatuses.get(other.accountId, second.id)).toBeUndefined();
  });

  describe('reminders', () => {
    async function standingAlert(t: Tenant, store: Awaited<ReturnType<FreshStore['open']>>, dueAt: string) {
      const resultId = await storePending(store, t, at(0));
      await store.checkStatuses.applyResult(t.accountId, t.check.id, resultId, at(0), (prev) => ({
        ...failedRun(prev, resultId, at(0), 'ALERT_FAILURE'),
        nextReminderAt: dueAt,
      }));
    }

    it('lists the checks due, earliest first, and says when the next one is due', async () => {
      const store = await fresh.open();
      const t = await seedTenant(store);
      const later = { ...t, check: await addCheck(store, t.accountId, t.locationId, 'Later') };
      expect(await store.checkStatuses.nextReminderDue()).toBeNull();
      await standingAlert(later, store, at(20));
      await standingAlert(t, store, at(10));
      expect(await store.checkStatuses.nextReminderDue()).toBe(at(10));
      expect(await store.checkStatuses.listRemindersDue(at(15), 10)).toEqual([
        { accountId: t.accountId, checkId: t.check.id },
      ]);
      expect((await store.checkStatuses.listRemindersDue(at(30), 10)).map((r) => r.checkId)).toEqual([
        t.check.id,
        later.check.id,
      ]);
      expect(await store.checkStatuses.listRemindersDue(at(30), 1)).toHaveLength(1);
    });

    it('applyReminder reads the episode alert, records the reminder and the next due time', async () => {
      const store = await fresh.open();
      const t = await seedTenant(store);
      await standingAlert(t, store, at(10));
      const seen: CheckAlertRecord[] = [];
      const reminder = await store.checkStatuses.applyReminder(
        t.accountId,
        t.check.id,
        at(10),
        (status, reminded) => {
          expect(reminded).toMatchObject({ alertType: 'ALERT_FAILURE', createdAt: at(0) });
          return {
            alert: { ...status.alert, remindersSent: 1 },
            reminder: { ...newAlert('ALERT_FAILURE_REMAIN', status.lastCheckRunId ?? '', at(0)) },
            nextReminderAt: at(20),
          };
        },
        (alert) => {
          seen.push(alert);
        },
      );
      expect(reminder).toMatchObject({ alertType: 'ALERT_FAILURE_REMAIN', createdAt: at(10), checkId: t.check.id });
      expect(seen).toEqual([reminder]);
      expect(await store.checkStatuses.get(t.accountId, t.check.id)).toMatchObject({ alert: { remindersSent: 1 } });
      expect(await store.checkStatuses.nextReminderDue()).toBe(at(20));

      const none = await store.checkStatuses.applyReminder(t.accountId, t.check.id, at(20), (status) => ({
        alert: status.alert,
        reminder: null,
        nextReminderAt: null,
      }));
      expect(none).toBeNull();
      expect(await store.checkStatuses.nextReminderDue()).toBeNull();
      const missing = await store.checkStatuses.applyReminder(t.accountId, crypto.randomUUID(), at(20), () => {
        throw new Error('not called for a check without a status');
      });
      expect(missing).toBeNull();
    });
  });

  it('check alerts: newest first, by check, within the time range, in pages', async () => {
    const store = await fresh.open();
    const t = await seedTenant(store);
    const second = await addCheck(store, t.accountId, t.locationId, 'Second');
    const a0 = await raiseAlert(store, t, at(0));
    const a1 = await raiseAlert(store, t, at(1), 'ALERT_RECOVERY');
    const b2 = await raiseAlert(store, t, at(2), 'ALERT_FAILURE', second);
    await raiseAlert(store, await seedTenant(store, 'Other'), at(1));
    const ids = (alerts: CheckAlertRecord[]) => alerts.map((a) => a.id);
    const all = { from: at(0), to: at(10), limit: 10, page: 1 };

    expect(ids(await store.checkAlerts.list(t.accountId, all))).toEqual([b2.id, a1.id, a0.id]);
    expect(ids(await store.checkAlerts.list(t.accountId, { ...all, checkId: t.check.id }))).toEqual([a1.id, a0.id]);
    expect(ids(await store.checkAlerts.list(t.accountId, { ...all, from: at(1), to: at(2) }))).toEqual([a1.id]);
    expect(ids(await store.checkAlerts.list(t.accountId, { ...all, limit: 2, page: 2 }))).toEqual([a0.id]);
    expect((await store.checkAlerts.list(t.accountId, { ...all, checkId: t.check.id }))[0]).toEqual(a1);
  });

  it('two stores applying results of one check at the same time: each result once, no update lost', async () => {
    const a = await fresh.open();
    const b = await fresh.open();
    const t = await seedTenant(a);
    const perStore = 6;
    const resultIds = await Promise.all(Array.from({ length: perStore * 2 }, (_, i) => storePending(a, t, at(i))));
    const apply = (store: typeof a, resultId: string, minute: number) =>
      store.checkStatuses.applyResult(t.accountId, t.check.id, resultId, at(minute), (prev) =>
        failedRun(prev, resultId, at(minute), prev === undefined ? 'ALERT_FAILURE' : undefined),
      );
    // Each result is offered to both stores, as a live submit and another replica's replay may both try.
    const outcomes = await Promise.all(resultIds.flatMap((id, i) => [apply(a, id, i), apply(b, id, i)]));
    expect(outcomes.filter((o) => o !== null)).toHaveLength(resultIds.length);
    expect(await b.checkStatuses.get(t.accountId, t.check.id)).toMatchObject({
      alert: { consecutiveFailedRuns: resultIds.length },
    });
    const alerts = await b.checkAlerts.list(t.accountId, { from: at(0), to: at(60), limit: 100, page: 1 });
    expect(alerts.map((alert) => alert.alertType)).toEqual(['ALERT_FAILURE']);
    expect(await b.results.listStatusPending({ limit: 100 })).toEqual([]);
  });
});
