/** The dashboard and dashboard incident repositories at store level, on SQLite and PostgreSQL. */
import { beforeEach, describe, expect, it } from 'vitest';
import { ConflictError } from '../../src/service/http/errors.ts';
import type { DashboardInput } from '../../src/service/store/heartbeat-dashboard-types.ts';
import { freshAccountEachTest } from '../support/fresh-account.ts';
import { storeBackends } from '../support/store-backends.ts';

const dashboardInput = (url: string | null, overrides: Partial<DashboardInput> = {}): DashboardInput => ({
  body: { header: `board ${url}`, customUrl: url },
  customUrlKey: url,
  customDomainKey: null,
  isPrivate: false,
  ...overrides,
});

describe.each(storeBackends())('dashboards on $name', (backend) => {
  const t = freshAccountEachTest(backend);

  it('creates with a numeric id, reads back by id and address, and lists in pages', async () => {
    const first = await t.store.dashboards.create(t.accountId, dashboardInput('one'));
    const second = await t.store.dashboards.create(
      t.accountId,
      dashboardInput('two', { customDomainKey: 'status.example.com' }),
    );
    expect(typeof first.id).toBe('number');
    expect(second.id).toBeGreaterThan(first.id);
    expect(first).toMatchObject({
      accountId: t.accountId,
      body: { header: 'board one', customUrl: 'one' },
      keys: [],
      updatedAt: null,
    });
    expect(first.newKey).toBeUndefined();
    expect(await t.store.dashboards.get(t.accountId, first.id)).toEqual(first);
    expect(await t.store.dashboards.getByAddress(t.accountId, 'customUrl', 'two')).toEqual(second);
    expect(await t.store.dashboards.getByAddress(t.accountId, 'customDomain', 'status.example.com')).toEqual(second);
    expect(await t.store.dashboards.findByAddress('customDomain', 'status.example.com')).toEqual(second);
    expect((await t.store.dashboards.list(t.accountId, { limit: 1, page: 2 })).map((d) => d.id)).toEqual([second.id]);
    expect((await t.store.dashboards.list(t.accountId, { limit: 10, page: 1 })).map((d) => d.id)).toEqual([
      first.id,
      second.id,
    ]);

    const other = (await t.store.accounts.create('Other')).account.id;
    expect(await t.store.dashboards.get(other, first.id)).toBeUndefined();
    expect(await t.store.dashboards.getByAddress(other, 'customUrl', 'one')).toBeUndefined();
    expect(await t.store.dashboards.findByAddress('customUrl', 'one')).toEqual(first);
  });

  it('refuses a custom URL or domain any account already has, naming the property', async () => {
    await t.store.dashboards.create(t.accountId, dashboardInput('taken', { customDomainKey: 'taken.example.com' }));
    const other = (await t.store.accounts.create('Other')).account.id;
    await expect(t.store.dashboards.create(other, dashboardInput('taken'))).rejects.toThrow(
      new ConflictError('body/customUrl is already in use by another dashboard'),
    );
    await expect(
      t.store.dashboards.create(other, dashboardInput('free', { customDomainKey: 'taken.example.com' })),
    ).rejects.toThrow(new ConflictError('body/customDomain is already in use by another dashboard'));
    const mine = await t.store.dashboards.create(other, dashboardInput('free'));
    await expect(t.store.dashboards.update(other, mine.id, dashboardInput('taken'))).rejects.toBeInstanceOf(
      ConflictError,
    );
  });

  it('gives a private dashboard one viewer key, shown once, and revokes it when made public', async () => {
    const created = await t.store.dashboards.create(t.accountId, dashboardInput('private', { isPrivate: true }));
    expect(created.newKey?.rawKey).toMatch(/^da_[0-9a-f]{32}$/);
    expect(created.keys).toEqual([expect.objectContaining({ id: created.newKey?.id })]);
    expect(await t.store.dashboards.hasViewerKey(created.id, created.newKey?.rawKey ?? '')).toBe(true);
    expect(await t.store.dashboards.hasViewerKey(created.id, 'da_wrong')).toBe(false);

    const still = await t.store.dashboards.update(
      t.accountId,
      created.id,
      dashboardInput('private', { isPrivate: true }),
    );
    expect(still?.newKey).toBeUndefined();
    expect(still?.keys).toHaveLength(1);
    expect(still?.updatedAt).not.toBeNull();

    const opened = await t.store.dashboards.update(t.accountId, created.id, dashboardInput('private'));
    expect(opened?.keys).toEqual([]);
    expect(await t.store.dashboards.hasViewerKey(created.id, created.newKey?.rawKey ?? '')).toBe(false);
    const again = await t.store.dashboards.update(
      t.accountId,
      created.id,
      dashboardInput('private', { isPrivate: true }),
    );
    expect(again?.newKey?.rawKey).toMatch(/^da_/);
    expect(await t.store.dashboards.update(t.accountId, created.id + 1000, dashboardInput('x'))).toBeUndefined();
  });

  it('deletes only within the account', async () => {
    const dashboard = await t.store.dashboards.create(t.accountId, dashboardInput('one'));
    const other = (await t.store.accounts.create('Other')).account.id;
    expect(await t.store.dashboards.delete(other, dashboard.id)).toBe(false);
    expect(await t.store.dashboards.delete(t.accountId, dashboard.id)).toBe(true);
    expect(await t.store.dashboards.get(t.accountId, dashboard.id)).toBeUndefined();
    expect(await t.store.dashboards.delete(t.accountId, dashboard.id)).toBe(false);
  });

  it('gives a custom URL to one of two stores creating it at once', async () => {
    const other = await t.fresh.open();
    const outcomes = await Promise.allSettled(
      [t.store, other].map((s) => s.dashboards.create(t.accountId, dashboardInput('race'))),
    );
    expect(outcomes.filter((o) => o.status === 'fulfilled')).toHaveLength(1);
    expect(outcomes.filter((o) => o.status === 'rejected').map((o) => (o as PromiseRejectedResult).reason)).toEqual([
      expect.any(ConflictError),
    ]);
  });
});

describe.each(storeBackends())('dashboard incidents on $name', (backend) => {
  const t = freshAccountEachTest(backend);
  let dashboardId: number;
  beforeEach(async () => {
    dashboardId = (await t.store.dashboards.create(t.accountId, dashboardInput('board'))).id;
  });

  const fields = (name: string, startedAt: string | null = null, stoppedAt: string | null = null) => ({
    name,
    impact: 'MAJOR' as const,
    startedAt,
    stoppedAt,
  });

  it('creates an incident with its first update, gets, updates and deletes it within the account', async () => {
    const { incident, updates } = await t.store.dashboardIncidents.create(t.accountId, dashboardId, fields('Outage'), {
      status: 'INVESTIGATING',
      description: 'looking',
    });
    expect(incident).toMatchObject({
      accountId: t.accountId,
      dashboardId,
      name: 'Outage',
      impact: 'MAJOR',
      startedAt: null,
      stoppedAt: null,
      updatedAt: null,
    });
    expect(updates).toEqual([
      expect.objectContaining({
        incidentId: incident.id,
        status: 'INVESTIGATING',
        description: 'looking',
        updatedAt: null,
      }),
    ]);
    expect(await t.store.dashboardIncidents.get(t.accountId, incident.id)).toEqual(incident);
    const other = (await t.store.accounts.create('Other')).account.id;
    expect(await t.store.dashboardIncidents.get(other, incident.id)).toBeUndefined();

    const changed = await t.store.dashboardIncidents.update(t.accountId, incident.id, {
      ...fields('Outage, fixed'),
      impact: 'MINOR',
    });
    expect(changed).toMatchObject({ name: 'Outage, fixed', impact: 'MINOR' });
    expect(changed?.updatedAt).not.toBeNull();
    expect(await t.store.dashboardIncidents.update(other, incident.id, fields('theirs'))).toBeUndefined();

    expect(await t.store.dashboardIncidents.delete(other, incident.id)).toBe(false);
    expect(await t.store.dashboardIncidents.delete(t.accountId, incident.id)).toBe(true);
    expect(await t.store.dashboardIncidents.get(t.accountId, incident.id)).toBeUndefined();
    expect(await t.fresh.query('SELECT count(*) AS n FROM dashboard_incident_updates')).toEqual([{ n: 0 }]);
  });

  it('adds, lists (newest first, all or limited), edits and deletes updates, keeping the last one', async () => {
    const {
      incident,
      updates: [first],
    } = await t.store.dashboardIncidents.create(t.accountId, dashboardId, fields('Outage'), {
      status: 'INVESTIGATING',
      description: 'one',
    });
    const second = await t.store.dashboardIncidents.addUpdate(t.accountId, incident.id, {
      status: 'IDENTIFIED',
      description: 'two',
    });
    const third = await t.store.dashboardIncidents.addUpdate(t.accountId, incident.id, {
      status: 'RESOLVED',
      description: 'three',
    });
    expect((await t.store.dashboardIncidents.listUpdates(t.accountId, incident.id)).map((u) => u.description)).toEqual([
      'three',
      'two',
      'one',
    ]);
    expect(await t.store.dashboardIncidents.listUpdates(t.accountId, incident.id, 1)).toEqual([third]);
    const other = (await t.store.accounts.create('Other')).account.id;
    expect(await t.store.dashboardIncidents.listUpdates(other, incident.id)).toEqual([]);
    expect(
      await t.store.dashboardIncidents.addUpdate(other, incident.id, { status: 'RESOLVED', description: 'x' }),
    ).toBeUndefined();

    const edited = await t.store.dashboardIncidents.editUpdate(
      t.accountId,
      incident.id,
      second?.id ?? '',
      'two, edited',
    );
    expect(edited).toMatchObject({ id: second?.id, status: 'IDENTIFIED', description: 'two, edited' });
    expect(edited?.updatedAt).not.toBeNull();
    expect(await t.store.dashboardIncidents.editUpdate(other, incident.id, second?.id ?? '', 'x')).toBeUndefined();
    expect(
      await t.store.dashboardIncidents.editUpdate(t.accountId, incident.id, 'no-such-update', 'x'),
    ).toBeUndefined();

    expect(await t.store.dashboardIncidents.deleteUpdate(t.accountId, incident.id, third?.id ?? '')).toBe('deleted');
    expect(await t.store.dashboardIncidents.deleteUpdate(t.accountId, incident.id, second?.id ?? '')).toBe('deleted');
    expect(await t.store.dashboardIncidents.deleteUpdate(t.accountId, incident.id, first?.id ?? '')).toBe(
      'last-update',
    );
    expect(await t.store.dashboardIncidents.deleteUpdate(t.accountId, incident.id, 'no-such-update')).toBe('not-found');
    expect(await t.store.dashboardIncidents.deleteUpdate(other, incident.id, first?.id ?? '')).toBe('not-found');
  });

  it('lists the incidents active at a time, newest first, each with its latest update', async () => {
    const at = '2026-01-01T12:00:00.000Z';
    const make = async (name: string, startedAt: string | null, stoppedAt: string | null) =>
      (
        await t.store.dashboardIncidents.create(t.accountId, dashboardId, fields(name, startedAt, stoppedAt), {
          status: 'INVESTIGATING',
          description: `${name} 1`,
        })
      ).incident;
    const open = await make('open', null, null);
    const running = await make('running', '2026-01-01T11:00:00.000Z', '2026-01-01T13:00:00.000Z');
    await make('future', '2026-01-01T12:00:00.001Z', null);
    await make('over', '2026-01-01T10:00:00.000Z', at);
    const latest = await t.store.dashboardIncidents.addUpdate(t.accountId, open.id, {
      status: 'MONITORING',
      description: 'open 2',
    });

    const active = await t.store.dashboardIncidents.listActive(t.accountId, dashboardId, at);
    expect(active.map((a) => a.incident.name)).toEqual(['running', 'open']);
    expect(active[1]?.latest).toEqual(latest);
    expect(active[0]?.latest?.description).toBe('running 1');
    expect(active[0]?.incident).toEqual(running);
    const other = (await t.store.accounts.create('Other')).account.id;
    expect(await t.store.dashboardIncidents.listActive(other, dashboardId, at)).toEqual([]);
  });
});
