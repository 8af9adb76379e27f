/**
 * Alert channels, their subscriptions and alert notifications at store level, on SQLite and
 * PostgreSQL: the fan-out's transaction, the delivery worker's leased claims, and two stores (two
 * connections, as two service replicas) claiming the same due notifications at the same time.
 */
import { describe, expect, it } from 'vitest';
import type { AlertNotificationRecord } from '../../src/service/store/alert-notification-types.ts';
import type { Store } from '../../src/service/store/store.ts';
import {
  addCheck,
  draftFor,
  groupInput,
  raiseAlert,
  seedTenant,
  webhookChannel,
} from '../support/alerting-fixtures.ts';
import { freshDatabaseEachTest } from '../support/fresh-account.ts';
import { storeBackends } from '../support/store-backends.ts';

const T0 = '2026-11-23T09:00:00.000Z';
const at = (minutes: number) => new Date(Date.parse(T0) + minutes * 60_000).toISOString();
const date = (minutes: number) => new Date(at(minutes));

describe.each(storeBackends())('alert channels on $name', (backend) => {
  const fresh = freshDatabaseEachTest(backend);

  it('creates, reads, lists, updates and deletes a channel; its secret config field is sealed at rest', async () => {
    const store = await fresh.open();
    const t = await seedTenant(store);
    const created = await store.alertChannels.create(t.accountId, {
      ...webhookChannel('http://127.0.0.1/one'),
      subscriptions: [{ checkId: t.check.id, groupId: null, activated: true }],
    });
    expect(created).toMatchObject({ accountId: t.accountId, sendFailure: true, autoSubscribe: false, updatedAt: null });
    expect(created.definition).toEqual(webhookChannel('http://127.0.0.1/one').definition);
    expect(created.subscriptions).toEqual([
      { id: expect.any(Number), checkId: t.check.id, groupId: null, activated: true },
    ]);
    const stored = await fresh.query('SELECT sealed_config FROM alert_channels');
    expect(String(stored[0]?.sealed_config)).not.toContain('hook-secret-value');
    expect(await store.alertChannels.get(t.accountId, created.id)).toEqual(created);

    const second = await store.alertChannels.create(t.accountId, webhookChannel('http://127.0.0.1/two'));
    expect((await store.alertChannels.list(t.accountId, { limit: 10, page: 1 })).map((c) => c.id)).toEqual([
      created.id,
      second.id,
    ]);
    expect((await store.alertChannels.list(t.accountId, { limit: 1, page: 2 })).map((c) => c.id)).toEqual([second.id]);

    // Without subscriptions in the input, they stay; with them, they become exactly those.
    const kept = await store.alertChannels.update(t.accountId, created.id, {
      ...webhookChannel('http://127.0.0.1/new'),
      sendFailure: false,
    });
    expect(kept).toMatchObject({
      sendFailure: false,
      updatedAt: expect.any(String),
      subscriptions: created.subscriptions,
    });
    expect(kept?.definition.config).toMatchObject({ url: 'http://127.0.0.1/new', webhookSecret: 'hook-secret-value' });
    const emptied = await store.alertChannels.update(t.accountId, created.id, {
      ...webhookChannel('http://127.0.0.1/new'),
      subscriptions: [],
    });
    expect(emptied?.subscriptions).toEqual([]);

    const other = await seedTenant(store, 'Other');
    expect(await store.alertChannels.get(other.accountId, created.id)).toBeUndefined();
    expect(
      await store.alertChannels.update(other.accountId, created.id, webhookChannel('http://127.0.0.1/x')),
    ).toBeUndefined();
    expect(await store.alertChannels.delete(other.accountId, created.id)).toBe(false);
    expect(await store.alertChannels.delete(t.accountId, created.id)).toBe(true);
    expect(await store.alertChannels.get(t.accountId, created.id)).toBeUndefined();
    expect(await store.alertChannels.getTarget(t.accountId, second.id)).toMatchObject({
      id: second.id,
      definition: { type: 'WEBHOOK' },
    });
    expect(await store.alertChannels.getTarget(t.accountId, created.id)).toBeUndefined();
  });

  it('putSubscription adds or updates a subscription of a channel of the account', async () => {
    const store = await fresh.open();
    const t = await seedTenant(store);
    const channel = await store.alertChannels.create(t.accountId, webhookChannel('http://127.0.0.1/one'));
    const added = await store.alertChannels.putSubscription(t.accountId, channel.id, {
      checkId: t.check.id,
      groupId: null,
      activated: true,
    });
    const updated = await store.alertChannels.putSubscription(t.accountId, channel.id, {
      checkId: t.check.id,
      groupId: null,
      activated: false,
    });
    expect(updated).toEqual({ ...added, activated: false });
    const other = await seedTenant(store, 'Other');
    expect(
      await store.alertChannels.putSubscription(other.accountId, channel.id, {
        checkId: t.check.id,
        groupId: null,
        activated: true,
      }),
    ).toBeUndefined();
  });

  it('who is subscribed: by check or group, activated only, each channel once; new and replaced subscriptions', async () => {
    const store = await fresh.open();
    const t = await seedTenant(store);
    const group = await store.checkGroups.create(t.accountId, groupInput('G'));
    const other = await addCheck(store, t.accountId, t.locationId, 'Other');
    const channel = (autoSubscribe = false) =>
      store.alertChannels.create(t.accountId, webhookChannel('http://127.0.0.1/hook', { autoSubscribe }));
    const byCheck = await channel();
    const byGroup = await channel();
    const both = await channel();
    const inactive = await channel();
    const auto = await channel(true);
    const foreign = await store.alertChannels.create(
      (await seedTenant(store, 'Foreign')).accountId,
      webhookChannel('http://127.0.0.1/f'),
    );

    await store.alertChannels.subscribeNew(
      t.accountId,
      { checkId: t.check.id },
      [
        { alertChannelId: byCheck.id, activated: true },
        { alertChannelId: both.id, activated: true },
        { alertChannelId: inactive.id, activated: false },
        { alertChannelId: auto.id, activated: false },
        { alertChannelId: foreign.id, activated: true },
      ],
      true,
    );
    await store.alertChannels.subscribeNew(
      t.accountId,
      { groupId: group.id },
      [
        { alertChannelId: byGroup.id, activated: true },
        { alertChannelId: both.id, activated: true },
      ],
      false,
    );
    await store.alertChannels.subscribeNew(t.accountId, { checkId: other.id }, [], true);

    const ids = (cs: Array<{ id: number }>) => cs.map((c) => c.id);
    expect(ids(await store.alertChannels.listSubscribedTo(t.accountId, t.check.id, group.id))).toEqual([
      byCheck.id,
      byGroup.id,
      both.id,
    ]);
    expect(ids(await store.alertChannels.listSubscribedTo(t.accountId, t.check.id, null))).toEqual([
      byCheck.id,
      both.id,
    ]);
    expect(ids(await store.alertChannels.listSubscribedTo(t.accountId, other.id, null))).toEqual([auto.id]);

    const checks = await store.alertChannels.checkSubscriptions(t.accountId, [t.check.id, other.id, 'no-such-check']);
    expect(checks.get(t.check.id)).toEqual([
      { alertChannelId: byCheck.id, activated: true },
      { alertChannelId: both.id, activated: true },
      { alertChannelId: inactive.id, activated: false },
      { alertChannelId: auto.id, activated: false },
    ]);
    expect(checks.get(other.id)).toEqual([{ alertChannelId: auto.id, activated: true }]);
    expect(checks.get('no-such-check')).toEqual([]);
    const groups = await store.alertChannels.groupSubscriptions(t.accountId, [group.id, group.id + 1000]);
    expect(groups.get(group.id)).toEqual([
      { alertChannelId: byGroup.id, activated: true },
      { alertChannelId: both.id, activated: true },
    ]);
    expect(groups.get(group.id + 1000)).toEqual([]);

    await store.alertChannels.replaceSubscriptionsOf(t.accountId, { groupId: group.id }, [
      { alertChannelId: inactive.id, activated: true },
    ]);
    expect((await store.alertChannels.groupSubscriptions(t.accountId, [group.id])).get(group.id)).toEqual([
      { alertChannelId: inactive.id, activated: true },
    ]);
    await store.alertChannels.replaceSubscriptionsOf(t.accountId, { checkId: t.check.id }, [
      { alertChannelId: both.id, activated: false },
    ]);
    expect((await store.alertChannels.checkSubscriptions(t.accountId, [t.check.id])).get(t.check.id)).toEqual([
      { alertChannelId: both.id, activated: false },
    ]);

    expect(await store.alertChannels.ownedIds(t.accountId, [byCheck.id, foreign.id, auto.id, 999_999])).toEqual(
      new Set([byCheck.id, auto.id]),
    );
    expect(await store.alertChannels.ownedIds(t.accountId, [])).toEqual(new Set());
  });
});

describe.each(storeBackends())('alert notifications on $name', (backend) => {
  const fresh = freshDatabaseEachTest(backend);

  async function alertWithChannels(store: Store, channels = 2) {
    const t = await seedTenant(store);
    const alert = await raiseAlert(store, t, at(0));
    const created = [];
    for (let i = 0; i < channels; i++)
      created.push(await store.alertChannels.create(t.accountId, webhookChannel(`http://127.0.0.1/${i}`)));
    return { t, alert, channels: created };
  }

  it('fans an alert out once: one notification per channel, a deleted channel skipped, the alert marked', async () => {
    const store = await fresh.open();
    const { t, alert, channels } = await alertWithChannels(store, 3);
    const [one, two, gone] = channels;
    if (!one || !two || !gone) throw new Error('three channels expected');
    expect((await store.alertNotifications.pendingAlerts(10)).map((a) => a.id)).toEqual([alert.id]);
    await store.alertChannels.delete(t.accountId, gone.id);

    const drafts = [
      draftFor(t.check, alert, one.id),
      draftFor(t.check, alert, two.id),
      draftFor(t.check, alert, gone.id),
    ];
    expect(await store.alertNotifications.fanOut(alert.id, drafts, null, date(1))).toBe(2);
    expect(await store.alertNotifications.fanOut(alert.id, drafts, null, date(2))).toBe(0);
    expect(await store.alertNotifications.pendingAlerts(10)).toEqual([]);

    const { fannedOutAt, suppressedReason, notifications } = await store.alertNotifications.forAlert(alert.id);
    expect({ fannedOutAt, suppressedReason }).toEqual({ fannedOutAt: at(1), suppressedReason: null });
    expect(notifications.map((n) => [n.id, n.alertChannelId, n.state, n.attempts, n.nextAttemptAt])).toEqual([
      [drafts[0]?.message.notificationId, one.id, 'pending', 0, at(1)],
      [drafts[1]?.message.notificationId, two.id, 'pending', 0, at(1)],
    ]);
    expect(notifications[0]).toMatchObject({
      accountId: t.accountId,
      checkId: t.check.id,
      checkAlertId: alert.id,
      channelType: 'WEBHOOK',
      message: drafts[0]?.message,
    });
    expect(await store.alertNotifications.pendingCount()).toBe(2);
    expect(await store.alertNotifications.nextDueAt()).toBe(at(1));
  });

  it('a suppressed alert is marked with its reason and queues nothing; an unknown alert queues nothing', async () => {
    const store = await fresh.open();
    const { t, alert, channels } = await alertWithChannels(store, 1);
    expect(await store.alertNotifications.fanOut(alert.id, [], 'in a maintenance window', date(1))).toBe(0);
    expect(await store.alertNotifications.forAlert(alert.id)).toEqual({
      fannedOutAt: at(1),
      suppressedReason: 'in a maintenance window',
      notifications: [],
    });
    expect(
      await store.alertNotifications.fanOut(
        alert.id + 1000,
        [draftFor(t.check, alert, channels[0]?.id ?? 0)],
        null,
        date(1),
      ),
    ).toBe(0);
    expect(await store.alertNotifications.forAlert(alert.id + 1000)).toEqual({
      fannedOutAt: null,
      suppressedReason: null,
      notifications: [],
    });
    expect(await store.alertNotifications.nextDueAt()).toBeNull();
    expect(await store.alertNotifications.pendingCount()).toBe(0);
  });

  it('claims due notifications with a lease, counts the attempt, and records delivery, retry and failure', async () => {
    const store = await fresh.open();
    const { t, alert, channels } = await alertWithChannels(store, 3);
    const drafts = channels.map((c) => draftFor(t.check, alert, c.id));
    await store.alertNotifications.fanOut(alert.id, drafts, null, date(0));

    expect(await store.alertNotifications.claimDue(date(-1), 10, 60_000)).toEqual([]);
    const claimed = await store.alertNotifications.claimDue(date(0), 2, 60_000);
    expect(claimed.map((n) => [n.attempts, n.lastAttemptAt, n.nextAttemptAt])).toEqual([
      [1, at(0), at(1)],
      [1, at(0), at(1)],
    ]);
    const rest = await store.alertNotifications.claimDue(date(0), 10, 60_000);
    expect(rest).toHaveLength(1);
    // Leased: not due again until the lease runs out.
    expect(await store.alertNotifications.claimDue(date(0.5), 10, 60_000)).toEqual([]);

    const [delivered, retried] = claimed as [AlertNotificationRecord, AlertNotificationRecord];
    const failed = rest[0] as AlertNotificationRecord;
    await store.alertNotifications.markDelivered(delivered.id, date(0.2), '200 OK');
    await store.alertNotifications.reschedule(retried.id, date(5), 'status 503', '503');
    await store.alertNotifications.markFailed(failed.id, 'status 400', '400');
    // A delivered one is not rescheduled by a late retry.
    await store.alertNotifications.reschedule(delivered.id, date(5), 'late', null);

    const byId = new Map((await store.alertNotifications.forAlert(alert.id)).notifications.map((n) => [n.id, n]));
    expect(byId.get(delivered.id)).toMatchObject({
      state: 'delivered',
      sentAt: at(0.2),
      lastError: null,
      notificationResult: '200 OK',
      nextAttemptAt: at(1),
    });
    expect(byId.get(retried.id)).toMatchObject({
      state: 'pending',
      nextAttemptAt: at(5),
      lastError: 'status 503',
      notificationResult: '503',
    });
    expect(byId.get(failed.id)).toMatchObject({ state: 'failed', lastError: 'status 400', notificationResult: '400' });
    expect(await store.alertNotifications.pendingCount()).toBe(1);
    expect(await store.alertNotifications.nextDueAt()).toBe(at(5));
    expect((await store.alertNotifications.claimDue(date(5), 10, 60_000)).map((n) => [n.id, n.attempts])).toEqual([
      [retried.id, 2],
    ]);
  });

  it('lists an account’s notifications newest first, by channel, by failure, in pages', async () => {
    const store = await fresh.open();
    const { t, alert, channels } = await alertWithChannels(store, 2);
    const [one, two] = channels;
    if (!one || !two) throw new Error('two channels expected');
    const later = await raiseAlert(store, t, at(3));
    await store.alertNotifications.fanOut(
      alert.id,
      [draftFor(t.check, alert, one.id), draftFor(t.check, alert, two.id)],
      null,
      date(1),
    );
    await store.alertNotifications.fanOut(later.id, [draftFor(t.check, later, one.id)], null, date(4));
    const [first] = (await store.alertNotifications.forAlert(alert.id)).notifications;
    await store.alertNotifications.markFailed(first?.id ?? '', 'status 400', null);
    const all = { from: at(0), to: at(10), limit: 10, page: 1 };
    const list = async (q: Partial<typeof all> & { alertChannelId?: number; hasFailures?: boolean }) =>
      (await store.alertNotifications.list(t.accountId, { ...all, ...q })).map((n) => [
        n.checkAlertId,
        n.alertChannelId,
      ]);

    expect(await list({})).toEqual([
      [later.id, one.id],
      [alert.id, two.id],
      [alert.id, one.id],
    ]);
    expect(await list({ alertChannelId: one.id })).toEqual([
      [later.id, one.id],
      [alert.id, one.id],
    ]);
    expect(await list({ hasFailures: true })).toEqual([[alert.id, one.id]]);
    expect(await list({ hasFailures: false })).toEqual([
      [later.id, one.id],
      [alert.id, two.id],
    ]);
    expect(await list({ from: at(2) })).toEqual([[later.id, one.id]]);
    expect(await list({ limit: 2, page: 2 })).toEqual([[alert.id, one.id]]);
    expect(await store.alertNotifications.list((await seedTenant(store, 'Other')).accountId, all)).toEqual([]);
  });

  it('two stores fanning one alert out at the same time queue one notification per channel', async () => {
    const a = await fresh.open();
    const b = await fresh.open();
    const { t, alert, channels } = await alertWithChannels(a, 3);
    // Each replica builds its own drafts (their notification ids differ), as two fan-out workers would.
    const fanOut = (store: Store) =>
      store.alertNotifications.fanOut(
        alert.id,
        channels.map((c) => draftFor(t.check, alert, c.id)),
        null,
        date(1),
      );
    const queued = await Promise.all([fanOut(a), fanOut(b), fanOut(a), fanOut(b)]);
    expect(queued.toSorted()).toEqual([0, 0, 0, channels.length]);
    const { notifications } = await b.alertNotifications.forAlert(alert.id);
    expect(notifications.map((n) => n.alertChannelId)).toEqual(channels.map((c) => c.id));
    expect(new Set(notifications.map((n) => n.message.notificationId)).size).toBe(channels.length);
    expect(new Set(notifications.map((n) => n.id))).toEqual(
      new Set(notifications.map((n) => n.message.notificationId)),
    );
  });

  it('two stores claiming due notifications at the same time claim each one once', async () => {
    const a = await fresh.open();
    const b = await fresh.open();
    const { t, channels } = await alertWithChannels(a, 4);
    const alerts = [];
    for (let i = 0; i < 10; i++) alerts.push(await raiseAlert(a, t, at(i)));
    for (const alert of alerts)
      await a.alertNotifications.fanOut(
        alert.id,
        channels.map((c) => draftFor(t.check, alert, c.id)),
        null,
        date(0),
      );
    const total = alerts.length * channels.length;

    // Two workers per store, each claiming small batches until nothing is left for it.
    const worker = async (store: Store) => {
      const mine: AlertNotificationRecord[] = [];
      for (;;) {
        const batch = await store.alertNotifications.claimDue(date(1), 3, 60_000);
        if (batch.length === 0) return mine;
        mine.push(...batch);
      }
    };
    const claimed = (await Promise.all([worker(a), worker(b), worker(a), worker(b)])).flat();
    expect(claimed).toHaveLength(total);
    expect(new Set(claimed.map((n) => n.id)).size).toBe(total);
    expect(claimed.every((n) => n.attempts === 1)).toBe(true);
    expect(await b.alertNotifications.claimDue(date(1), 100, 60_000)).toEqual([]);
  });
});
