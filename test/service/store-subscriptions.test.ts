/**
 * Status page subscriptions and the subscriber notification outbox at store level, on SQLite and on
 * PostgreSQL: double opt-in through link tokens, the deliveries an incident update queues, the
 * outbox's lease-based claim, and two stores (two replicas) claiming at once.
 */
import { beforeEach, describe, expect, it } from 'vitest';
import type { OutboxEntry, SubscribedPage, SubscriptionInput } from '../../src/service/store/status-pages-types.ts';
import { freshAccountEachTest } from '../support/fresh-account.ts';
import { pageInput, policyAt, updateInput } from '../support/status-page-inputs.ts';
import { storeBackends } from '../support/store-backends.ts';

const NOW = new Date('2026-03-01T12:00:00.000Z');
const LEASE_MS = 60_000;
const email = (address: string): SubscriptionInput => ({ type: 'EMAIL', address, secret: null });

describe.each(storeBackends())('subscriptions and outbox on $name', (backend) => {
  const t = freshAccountEachTest(backend);
  let serviceId: string;
  let page: SubscribedPage;
  beforeEach(async () => {
    serviceId = (await t.store.statusPageServices.create(t.accountId, 'API')).id;
    const created = await t.store.statusPages.create(
      t.accountId,
      pageInput('acme', [{ name: 'c', serviceIds: [serviceId] }]),
    );
    page = { id: created.id, accountId: t.accountId, name: created.name, url: created.url };
  });

  /** Creates an incident on the page's service whose first update notifies subscribers. */
  const notifyingIncident = () =>
    t.store.incidents.create(t.accountId, {
      name: 'Outage',
      severity: 'MAJOR',
      serviceIds: [serviceId],
      update: updateInput('2026-03-01T11:00:00.000Z', { notifySubscribers: true }),
    });

  /** Everything due at `at`, claimed with a lease. */
  const claimAll = (at: Date) => t.store.outbox.claimDue(at, 1000, LEASE_MS);

  it('bulk-creates verified subscriptions, skipping an address already there in any case; lists and deletes them per account', async () => {
    const items: SubscriptionInput[] = [
      email('Ops@Acme.test'),
      { type: 'WEBHOOK', address: 'https://hooks.acme.test/x', secret: 'shh' },
      email('ops@acme.test'),
    ];
    expect(await t.store.subscriptions.bulkCreate(t.accountId, page.id, items, 'VERIFIED', policyAt(NOW))).toEqual({
      created: 2,
      skipped: 1,
      confirmationsQueued: 0,
    });
    const listed = await t.store.subscriptions.list(t.accountId, page.id);
    expect(listed?.map((s) => [s.type, s.address, s.status])).toEqual([
      ['EMAIL', 'Ops@Acme.test', 'VERIFIED'],
      ['WEBHOOK', 'https://hooks.acme.test/x', 'VERIFIED'],
    ]);
    expect(await t.store.outbox.pendingCount()).toBe(0);

    const other = (await t.store.accounts.create('Other')).account.id;
    expect(await t.store.subscriptions.list(other, page.id)).toBeUndefined();
    expect(await t.store.subscriptions.bulkCreate(other, page.id, items, 'VERIFIED', policyAt(NOW))).toBeUndefined();
    const first = listed?.[0]?.id ?? '';
    expect(await t.store.subscriptions.delete(other, page.id, first)).toBe(false);
    expect(await t.store.subscriptions.delete(t.accountId, page.id, first)).toBe(true);
    expect((await t.store.subscriptions.list(t.accountId, page.id))?.map((s) => s.type)).toEqual(['WEBHOOK']);
  });

  it('double opt-in: queues a confirmation, throttles and re-sends it, confirms by token, unsubscribes by token', async () => {
    expect(await t.store.subscriptions.subscribe(page, email('a@acme.test'), policyAt(NOW))).toBe('created');
    expect(await t.store.subscriptions.subscribe(page, email('A@acme.test'), policyAt(NOW))).toBe('throttled');
    const [confirmation] = await claimAll(NOW);
    expect(confirmation).toMatchObject({ kind: 'confirmation', channel: 'EMAIL', address: 'a@acme.test', attempts: 1 });
    expect(confirmation?.payload).toEqual({
      statusPage: { id: page.id, name: page.name, url: page.url },
      expiresAt: policyAt(NOW).expiresAt.toISOString(),
    });
    const confirmToken = confirmation?.confirmToken ?? '';
    const unsubscribeToken = confirmation?.unsubscribeToken ?? '';
    expect(confirmToken).not.toBe('');

    const later = new Date(NOW.getTime() + 20 * 60_000);
    expect(await t.store.subscriptions.subscribe(page, email('a@acme.test'), policyAt(later))).toBe('resent');
    expect(await t.store.outbox.pendingCount()).toBe(2);

    expect(await t.store.subscriptions.findByToken(confirmToken, 'confirm', later)).toMatchObject({
      subscription: { status: 'PENDING' },
      page,
    });
    expect(await t.store.subscriptions.findByToken(confirmToken, 'unsubscribe', later)).toBeUndefined();
    const confirmed = await t.store.subscriptions.confirm(confirmToken, later);
    expect(confirmed).toMatchObject({ subscription: { address: 'a@acme.test', status: 'VERIFIED' }, page });
    expect(await t.store.subscriptions.confirm(confirmToken, later)).toBeUndefined();
    expect(await t.store.subscriptions.subscribe(page, email('a@acme.test'), policyAt(later))).toBe('exists');

    expect(await t.store.subscriptions.findByToken(unsubscribeToken, 'unsubscribe', later)).toMatchObject({
      subscription: { status: 'VERIFIED' },
    });
    expect(await t.store.subscriptions.unsubscribe(unsubscribeToken)).toMatchObject({
      subscription: { address: 'a@acme.test' },
    });
    expect(await t.store.subscriptions.unsubscribe(unsubscribeToken)).toBeUndefined();
    expect(await t.store.subscriptions.list(t.accountId, page.id)).toEqual([]);
  });

  it('two stores subscribing one address at once make one subscription with one confirmation', async () => {
    const replicas = [t.store, await t.fresh.open()];
    const outcomes = await Promise.all(
      ['same@acme.test', 'SAME@acme.test', 'Same@acme.test', 'same@ACME.test'].map((address, i) =>
        replicas[i % 2]?.subscriptions.subscribe(page, email(address), policyAt(NOW)),
      ),
    );
    expect(outcomes.sort()).toEqual(['created', 'throttled', 'throttled', 'throttled']);
    expect(await t.store.subscriptions.list(t.accountId, page.id)).toHaveLength(1);
    expect(await t.store.outbox.pendingCount()).toBe(1);
  });

  it('removes expired PENDING subscriptions, and treats an expired one not yet removed as gone', async () => {
    await t.store.subscriptions.bulkCreate(t.accountId, page.id, [email('kept@acme.test')], 'VERIFIED', policyAt(NOW));
    await t.store.subscriptions.subscribe(page, email('late@acme.test'), policyAt(NOW));
    const [confirmation] = await claimAll(NOW);
    const afterExpiry = new Date(policyAt(NOW).expiresAt.getTime() + 1);
    expect(
      await t.store.subscriptions.findByToken(confirmation?.confirmToken ?? '', 'confirm', afterExpiry),
    ).toBeUndefined();
    expect(await t.store.subscriptions.subscribe(page, email('late@acme.test'), policyAt(afterExpiry))).toBe('created');
    expect(await t.store.subscriptions.deleteExpired(afterExpiry)).toBe(0);

    const muchLater = new Date(afterExpiry.getTime() + 2 * 3_600_000);
    expect(await t.store.subscriptions.deleteExpired(muchLater)).toBe(1);
    expect((await t.store.subscriptions.list(t.accountId, page.id))?.map((s) => s.address)).toEqual(['kept@acme.test']);
  });

  it('queues one delivery per verified recipient of every page showing the service, once however often the update is saved', async () => {
    const second = await t.store.statusPages.create(
      t.accountId,
      pageInput('second', [{ name: 'c', serviceIds: [serviceId] }]),
    );
    await t.store.subscriptions.bulkCreate(
      t.accountId,
      page.id,
      [email('one@acme.test'), { type: 'WEBHOOK', address: 'https://hooks.acme.test/x', secret: 'shh' }],
      'VERIFIED',
      policyAt(NOW),
    );
    await t.store.subscriptions.bulkCreate(
      t.accountId,
      second.id,
      [email('ONE@acme.test'), email('two@acme.test')],
      'VERIFIED',
      policyAt(NOW),
    );
    await t.store.subscriptions.subscribe(page, email('pending@acme.test'), policyAt(NOW));
    await claimAll(NOW); // the confirmation

    const created = await notifyingIncident();
    expect(created.queued).toBe(3);
    const update = created.value.updates[0];
    const entries = await t.store.outbox.listForUpdate(update?.id ?? '');
    expect(entries.map((e) => [e.channel, e.address, e.secret])).toEqual([
      ['EMAIL', 'one@acme.test', null],
      ['WEBHOOK', 'https://hooks.acme.test/x', 'shh'],
      ['EMAIL', 'two@acme.test', null],
    ]);
    expect(entries[0]).toMatchObject({
      kind: 'incident',
      state: 'pending',
      attempts: 0,
      unsubscribeToken: expect.any(String),
    });
    expect(entries[0]?.payload).toMatchObject({
      incident: { id: created.value.id, name: 'Outage', services: [{ id: serviceId, name: 'API' }] },
      incidentUpdate: { id: update?.id },
      statusPages: [
        { id: page.id, name: page.name, url: 'acme' },
        { id: second.id, name: second.name, url: 'second' },
      ],
    });
    const again = await t.store.incidents.replaceUpdate(
      t.accountId,
      created.value.id,
      update?.id ?? '',
      updateInput('2026-03-01T11:00:00.000Z', { notifySubscribers: true }),
    );
    expect(again?.queued).toBe(0);
    expect(await t.store.outbox.listForUpdate(update?.id ?? '')).toHaveLength(3);
  });

  it('leases what it claims, and delivers, reschedules and fails entries', async () => {
    await t.store.subscriptions.bulkCreate(
      t.accountId,
      page.id,
      [email('a@acme.test'), email('b@acme.test'), email('c@acme.test')],
      'VERIFIED',
      policyAt(NOW),
    );
    expect(await t.store.outbox.nextDueAt()).toBeNull();
    await notifyingIncident();
    expect(await t.store.outbox.pendingCount()).toBe(3);
    const due = (await t.store.outbox.nextDueAt()) ?? '';
    const at = new Date(Date.parse(due) + 1);

    const claimed = await t.store.outbox.claimDue(at, 2, LEASE_MS);
    expect(claimed.map((e) => [e.attempts, e.nextAttemptAt])).toEqual([
      [1, new Date(at.getTime() + LEASE_MS).toISOString()],
      [1, new Date(at.getTime() + LEASE_MS).toISOString()],
    ]);
    const [third] = await t.store.outbox.claimDue(at, 2, LEASE_MS);
    expect(await t.store.outbox.claimDue(at, 2, LEASE_MS)).toEqual([]);
    const [delivered, retried] = claimed as [OutboxEntry, OutboxEntry];

    await t.store.outbox.markDelivered(delivered.id, at);
    expect(await t.store.outbox.get(delivered.id)).toMatchObject({
      state: 'delivered',
      deliveredAt: at.toISOString(),
      lastError: null,
    });
    const retryAt = new Date(at.getTime() + 5000);
    await t.store.outbox.reschedule(retried.id, retryAt, 'SMTP 451');
    expect(await t.store.outbox.get(retried.id)).toMatchObject({
      state: 'pending',
      nextAttemptAt: retryAt.toISOString(),
      lastError: 'SMTP 451',
    });
    await t.store.outbox.markFinal(third?.id ?? '', 'undeliverable', 'no such mailbox');
    expect(await t.store.outbox.get(third?.id ?? '')).toMatchObject({
      state: 'undeliverable',
      lastError: 'no such mailbox',
    });
    await t.store.outbox.reschedule(delivered.id, retryAt, 'late'); // a delivered entry stays delivered
    expect(await t.store.outbox.get(delivered.id)).toMatchObject({ state: 'delivered', lastError: null });

    expect(await t.store.outbox.pendingCount()).toBe(1);
    expect(await t.store.outbox.nextDueAt()).toBe(retryAt.toISOString());
    expect((await t.store.outbox.claimDue(retryAt, 10, LEASE_MS)).map((e) => [e.id, e.attempts])).toEqual([
      [retried.id, 2],
    ]);
    expect(await t.store.outbox.get('no-such-entry')).toBeUndefined();
  });

  it('two stores claiming at once (two replicas) claim each delivery exactly once', async () => {
    const addresses = Array.from({ length: 40 }, (_, i) => email(`s${i}@acme.test`));
    await t.store.subscriptions.bulkCreate(t.accountId, page.id, addresses, 'VERIFIED', policyAt(NOW));
    expect((await notifyingIncident()).queued).toBe(40);
    const replicas = [t.store, await t.fresh.open()];
    const at = new Date(Date.now() + 60_000);

    const claimedIds: string[] = [];
    for (;;) {
      const round = await Promise.all([0, 1, 2, 3].map((i) => replicas[i % 2]?.outbox.claimDue(at, 3, LEASE_MS) ?? []));
      const ids = round.flat().map((e) => e.id);
      if (ids.length === 0) break;
      claimedIds.push(...ids);
    }
    expect(claimedIds).toHaveLength(40);
    expect(new Set(claimedIds).size).toBe(40);
    expect(await t.fresh.query('SELECT DISTINCT attempts FROM notification_outbox')).toEqual([{ attempts: 1 }]);
  });
});
