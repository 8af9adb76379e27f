/**
 * Check groups (with their locations, members and trigger tokens) and maintenance windows at store
 * level, on SQLite and PostgreSQL.
 */
import { beforeEach, describe, expect, it } from 'vitest';
import type { MaintenanceWindowInput } from '../../src/service/store/maintenance-window-types.ts';
import type { Store } from '../../src/service/store/store.ts';
import { groupInput, seedTenant } from '../support/alerting-fixtures.ts';
import { addCheck, freshDatabaseEachTest } from '../support/fresh-account.ts';
import { storeBackends } from '../support/store-backends.ts';

describe.each(storeBackends())('check groups on $name', (backend) => {
  const fresh = freshDatabaseEachTest(backend);
  let store: Store;
  beforeEach(async () => {
    store = await fresh.open();
  });

  async function secondLocation(accountId: string) {
    return store.locations.create(accountId, { name: 'Lab', slugName: 'lab', icon: 'location', proxyUrl: null });
  }

  it('creates, reads and updates a group with its locations in the order given; secret variables are sealed at rest', async () => {
    const t = await seedTenant(store);
    const lab = await secondLocation(t.accountId);
    const input = groupInput(
      'Shop',
      { environmentVariables: [{ key: 'TOKEN', value: 'group-secret-value', locked: false, secret: true }] },
      [lab.id, t.locationId, lab.id],
    );
    const created = await store.checkGroups.create(t.accountId, input);
    expect(created).toMatchObject({
      id: expect.any(Number),
      accountId: t.accountId,
      name: 'Shop',
      activated: true,
      concurrency: 1,
      updatedAt: null,
    });
    expect(created.locationIds).toEqual([lab.id, t.locationId]);
    expect(created.body).toEqual(input.body);
    expect(JSON.stringify(await fresh.query('SELECT body FROM check_groups'))).not.toContain('group-secret-value');
    expect(await store.checkGroups.get(t.accountId, created.id)).toEqual(created);

    const changed = await store.checkGroups.update(t.accountId, created.id, {
      ...groupInput('Shop 2', {}, [t.locationId]),
      muted: true,
      concurrency: 3,
    });
    expect(changed).toMatchObject({
      name: 'Shop 2',
      muted: true,
      concurrency: 3,
      locationIds: [t.locationId],
      updatedAt: expect.any(String),
    });
    const other = await seedTenant(store, 'Other');
    expect(await store.checkGroups.get(other.accountId, created.id)).toBeUndefined();
    expect(await store.checkGroups.update(other.accountId, created.id, groupInput('X'))).toBeUndefined();
    expect(await store.checkGroups.update(t.accountId, created.id + 1000, groupInput('X'))).toBeUndefined();
  });

  it('lists oldest first, in pages, by any of the tags and by exact names', async () => {
    const t = await seedTenant(store);
    const a = await store.checkGroups.create(t.accountId, groupInput('A', { tags: ['prod', 'eu'] }));
    const b = await store.checkGroups.create(t.accountId, groupInput('B', { tags: ['staging'] }));
    const c = await store.checkGroups.create(t.accountId, groupInput('C'));
    await store.checkGroups.create((await seedTenant(store, 'Other')).accountId, groupInput('A', { tags: ['prod'] }));
    const list = async (opts: { tags?: string[]; names?: string[]; limit?: number; page?: number }) =>
      (await store.checkGroups.list(t.accountId, { limit: 10, page: 1, ...opts })).map((g) => g.id);

    expect(await list({})).toEqual([a.id, b.id, c.id]);
    expect(await list({ limit: 2, page: 2 })).toEqual([c.id]);
    expect(await list({ tags: ['eu', 'staging'] })).toEqual([a.id, b.id]);
    expect(await list({ tags: ['nowhere'] })).toEqual([]);
    expect(await list({ names: ['C', 'A', 'a'] })).toEqual([a.id, c.id]);
    expect(await list({ tags: ['prod'], names: ['B'] })).toEqual([]);
    expect(await list({ tags: [], names: [] })).toEqual([a.id, b.id, c.id]);
  });

  it('lists members by groupOrder, unset last, then creation; refuses to delete a group with members', async () => {
    const t = await seedTenant(store);
    const group = await store.checkGroups.create(t.accountId, groupInput('Shop'));
    const unordered = await addCheck(store, t.accountId, t.locationId, 'Unordered', { groupId: group.id });
    const second = await addCheck(store, t.accountId, t.locationId, 'Second', { groupId: group.id, groupOrder: 2 });
    const first = await addCheck(store, t.accountId, t.locationId, 'First', { groupId: group.id, groupOrder: 1 });
    await addCheck(store, t.accountId, t.locationId, 'Elsewhere', { groupId: group.id + 1000 });
    expect(await store.checkGroups.memberIds(t.accountId, group.id)).toEqual([first.id, second.id, unordered.id]);
    expect(await store.checkGroups.memberIds((await seedTenant(store, 'Other')).accountId, group.id)).toEqual([]);

    expect(await store.checkGroups.delete(t.accountId, group.id)).toBe('has_checks');
    for (const check of [unordered, second, first]) await store.checks.delete(t.accountId, check.id);
    expect(await store.checkGroups.delete(t.accountId, group.id)).toBe('deleted');
    expect(await store.checkGroups.delete(t.accountId, group.id)).toBe('not_found');
    expect(await store.checkGroups.get(t.accountId, group.id)).toBeUndefined();
  });

  it('keeps one trigger per group: created once, resolved by its token only, deleted', async () => {
    const t = await seedTenant(store);
    const group = await store.checkGroups.create(t.accountId, groupInput('Shop'));
    expect(await store.checkGroups.getTrigger(t.accountId, group.id)).toBeUndefined();
    const made = await store.checkGroups.ensureTrigger(t.accountId, group.id);
    expect(made).toMatchObject({
      created: true,
      trigger: { groupId: group.id, calledAt: null, token: expect.stringMatching(/^[A-Za-z0-9_-]{43}$/) },
    });
    expect(await store.checkGroups.ensureTrigger(t.accountId, group.id)).toEqual({
      trigger: made.trigger,
      created: false,
    });

    const now = '2026-11-23T09:00:00.000Z';
    expect(await store.checkGroups.callTrigger(group.id, `${made.trigger.token}x`, now)).toBeUndefined();
    expect(await store.checkGroups.callTrigger(group.id + 1, made.trigger.token, now)).toBeUndefined();
    expect(await store.checkGroups.callTrigger(group.id, made.trigger.token, now)).toEqual({ accountId: t.accountId });
    expect(await store.checkGroups.getTrigger(t.accountId, group.id)).toEqual({ ...made.trigger, calledAt: now });

    const other = await seedTenant(store, 'Other');
    expect(await store.checkGroups.getTrigger(other.accountId, group.id)).toBeUndefined();
    expect(await store.checkGroups.deleteTrigger(other.accountId, group.id)).toBe(false);
    expect(await store.checkGroups.deleteTrigger(t.accountId, group.id)).toBe(true);
    expect(await store.checkGroups.getTrigger(t.accountId, group.id)).toBeUndefined();
  });

  it("two stores ensuring a group's trigger at the same time create one", async () => {
    const other = await fresh.open();
    const t = await seedTenant(store);
    const group = await store.checkGroups.create(t.accountId, groupInput('Shop'));
    const ensured = await Promise.all(
      [store, other, store, other].map((s) => s.checkGroups.ensureTrigger(t.accountId, group.id)),
    );
    expect(ensured.filter((e) => e.created)).toHaveLength(1);
    expect(new Set(ensured.map((e) => e.trigger.token)).size).toBe(1);
  });
});

describe.each(storeBackends())('maintenance windows on $name', (backend) => {
  const fresh = freshDatabaseEachTest(backend);
  let store: Store;
  beforeEach(async () => {
    store = await fresh.open();
  });

  const window = (name: string, overrides: Partial<MaintenanceWindowInput> = {}): MaintenanceWindowInput => ({
    name,
    tags: ['prod'],
    startsAt: '2026-11-23T09:00:00.000Z',
    endsAt: '2026-11-23T10:00:00.000Z',
    repeatUnit: null,
    repeatInterval: null,
    repeatEndsAt: null,
    description: null,
    pauseAllChecks: false,
    silenceAlertsTags: [],
    silenceAllAlerts: false,
    ...overrides,
  });

  it('creates, reads, lists, updates and deletes windows of one account', async () => {
    const t = await seedTenant(store);
    const weekly = window('Weekly', {
      repeatUnit: 'WEEK',
      repeatInterval: 1,
      repeatEndsAt: '2027-01-31',
      description: 'patching',
      pauseAllChecks: true,
    });
    const created = await store.maintenanceWindows.create(t.accountId, weekly);
    expect(created).toEqual({
      ...weekly,
      id: expect.any(Number),
      accountId: t.accountId,
      createdAt: expect.any(String),
      updatedAt: null,
    });
    expect(await store.maintenanceWindows.get(t.accountId, created.id)).toEqual(created);
    const second = await store.maintenanceWindows.create(
      t.accountId,
      window('Once', { silenceAlertsTags: ['eu'], silenceAllAlerts: true }),
    );
    const other = await seedTenant(store, 'Other');
    await store.maintenanceWindows.create(other.accountId, window('Theirs'));

    expect((await store.maintenanceWindows.list(t.accountId, { limit: 10, page: 1 })).map((w) => w.id)).toEqual([
      created.id,
      second.id,
    ]);
    expect((await store.maintenanceWindows.list(t.accountId, { limit: 1, page: 2 })).map((w) => w.id)).toEqual([
      second.id,
    ]);
    expect(await store.maintenanceWindows.listAll(t.accountId)).toEqual([created, second]);

    const changed = await store.maintenanceWindows.update(
      t.accountId,
      created.id,
      window('Daily', { repeatUnit: 'DAY', repeatInterval: 2 }),
    );
    expect(changed).toMatchObject({
      name: 'Daily',
      repeatUnit: 'DAY',
      repeatInterval: 2,
      pauseAllChecks: false,
      updatedAt: expect.any(String),
    });
    expect(await store.maintenanceWindows.update(other.accountId, created.id, window('X'))).toBeUndefined();
    expect(await store.maintenanceWindows.get(other.accountId, created.id)).toBeUndefined();
    expect(await store.maintenanceWindows.delete(other.accountId, created.id)).toBe(false);
    expect(await store.maintenanceWindows.delete(t.accountId, created.id)).toBe(true);
    expect(await store.maintenanceWindows.listAll(t.accountId)).toEqual([second]);
  });
});
