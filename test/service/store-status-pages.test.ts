/**
 * The status page repositories at store level, on SQLite and on PostgreSQL: services, pages with
 * their cards, incidents with their updates, reader keys, the public page reads, and the version the
 * rendered pages are cached under (kept by migration 021's triggers).
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { BadRequestError, ConflictError } from '../../src/service/http/errors.ts';
import type { Store } from '../../src/service/store/store.ts';
import { pageInput, updateInput } from '../support/status-page-inputs.ts';
import { type FreshStore, storeBackends } from '../support/store-backends.ts';

describe.each(storeBackends())('status page store on $name', (backend) => {
  let fresh: FreshStore;
  let store: Store;
  let accountId: string;
  beforeEach(async () => {
    fresh = await backend.fresh();
    store = await fresh.open();
    accountId = (await store.accounts.create('Acme')).account.id;
  });
  afterEach(async () => {
    await fresh.dispose();
  });

  it('creates, reads, renames, lists (whole and paged) and deletes services, per account', async () => {
    const api = await store.statusPageServices.create(accountId, 'API');
    const web = await store.statusPageServices.create(accountId, 'Web');
    const other = (await store.accounts.create('Other')).account.id;
    expect(await store.statusPageServices.get(accountId, api.id)).toEqual(api);
    expect(await store.statusPageServices.get(other, api.id)).toBeUndefined();

    const renamed = await store.statusPageServices.update(accountId, api.id, 'Public API');
    expect(renamed).toMatchObject({ id: api.id, name: 'Public API', updatedAt: expect.any(String) });
    expect(await store.statusPageServices.update(other, api.id, 'x')).toBeUndefined();

    expect(await store.statusPageServices.list(accountId, {})).toEqual({ entries: [renamed, web], nextId: null });
    const first = await store.statusPageServices.list(accountId, { limit: 1 });
    expect(first.entries).toEqual([renamed]);
    expect(await store.statusPageServices.list(accountId, { limit: 1, nextId: first.nextId ?? '' })).toEqual({
      entries: [web],
      nextId: null,
    });

    expect(await store.statusPageServices.delete(other, web.id)).toBe(false);
    expect(await store.statusPageServices.delete(accountId, web.id)).toBe(true);
    expect(await store.statusPageServices.list(accountId, {})).toEqual({ entries: [renamed], nextId: null });
  });

  it('creates a page with cards, replaces its cards keeping a card sent back by id, lists, pages and deletes', async () => {
    const api = await store.statusPageServices.create(accountId, 'API');
    const web = await store.statusPageServices.create(accountId, 'Web');
    const page = await store.statusPages.create(
      accountId,
      pageInput('Acme', [{ name: 'Core', serviceIds: [web.id, api.id] }], {
        isPrivate: true,
        whiteLabel: true,
        description: 'All of it',
      }),
    );
    expect(page).toMatchObject({ url: 'acme', isPrivate: true, whiteLabel: true, description: 'All of it' });
    expect(page.cards).toEqual([expect.objectContaining({ name: 'Core', services: [web, api] })]);
    expect(await store.statusPages.get(accountId, page.id)).toEqual(page);

    const core = page.cards[0]?.id;
    const updated = await store.statusPages.update(
      accountId,
      page.id,
      pageInput('acme', [
        { name: 'New', serviceIds: [web.id] },
        { id: core, name: 'Core renamed', serviceIds: [api.id] },
      ]),
    );
    expect(updated?.cards.map((c) => [c.name, c.services.map((s) => s.name)])).toEqual([
      ['New', ['Web']],
      ['Core renamed', ['API']],
    ]);
    expect(updated?.cards[1]?.id).toBe(core);
    expect(updated).toMatchObject({ isPrivate: false, whiteLabel: false });
    expect(await store.statusPages.update(accountId, 'no-such-page', pageInput('x', []))).toBeUndefined();

    const second = await store.statusPages.create(accountId, pageInput('second', []));
    const firstPage = await store.statusPages.list(accountId, { limit: 1 });
    expect(firstPage.entries).toEqual([updated]);
    expect(await store.statusPages.list(accountId, { limit: 1, nextId: firstPage.nextId ?? '' })).toEqual({
      entries: [second],
      nextId: null,
    });

    expect(await store.statusPages.delete(accountId, second.id)).toBe(true);
    expect(await store.statusPages.get(accountId, second.id)).toBeUndefined();
  });

  it('refuses a taken url or custom domain with a ConflictError naming the field, and a foreign service with a BadRequestError', async () => {
    await store.statusPages.create(accountId, pageInput('taken', [], { customDomain: 'status.acme.test' }));
    await expect(store.statusPages.create(accountId, pageInput('TAKEN', []))).rejects.toThrow(
      new ConflictError('body/url "TAKEN" is already used by another status page'),
    );
    await expect(
      store.statusPages.create(accountId, pageInput('free', [], { customDomain: 'Status.Acme.test' })),
    ).rejects.toThrow(new ConflictError('body/customDomain "Status.Acme.test" is already used by another status page'));
    const other = (await store.accounts.create('Other')).account.id;
    const foreign = await store.statusPageServices.create(other, 'Theirs');
    await expect(
      store.statusPages.create(accountId, pageInput('free', [{ name: 'c', serviceIds: [foreign.id] }])),
    ).rejects.toBeInstanceOf(BadRequestError);
    // Nothing of the refused pages was kept.
    expect((await store.statusPages.list(accountId, { limit: 10 })).entries.map((p) => p.url)).toEqual(['taken']);
  });

  it('keeps incidents and their updates: state follows the updates; lists, pages, replaces and deletes', async () => {
    const api = await store.statusPageServices.create(accountId, 'API');
    const web = await store.statusPageServices.create(accountId, 'Web');
    const created = await store.incidents.create(accountId, {
      name: 'Outage',
      severity: 'MAJOR',
      serviceIds: [api.id],
      update: updateInput('2026-01-01T10:00:00.000Z'),
    });
    expect(created.queued).toBe(0);
    const incident = created.value;
    expect(incident).toMatchObject({
      name: 'Outage',
      severity: 'MAJOR',
      lastUpdateStatus: 'INVESTIGATING',
      duration: null,
      services: [api],
    });

    const changed = await store.incidents.update(accountId, incident.id, {
      name: 'Big outage',
      severity: 'CRITICAL',
      serviceIds: [web.id, api.id],
    });
    expect(changed).toMatchObject({ name: 'Big outage', severity: 'CRITICAL', services: [web, api] });

    const resolved = await store.incidents.addUpdate(
      accountId,
      incident.id,
      updateInput('2026-01-01T10:30:00.000Z', { status: 'RESOLVED' }),
    );
    expect(resolved?.value).toMatchObject({ incidentId: incident.id, status: 'RESOLVED' });
    expect(await store.incidents.get(accountId, incident.id)).toMatchObject({
      lastUpdateStatus: 'RESOLVED',
      duration: 30,
    });
    const updateId = resolved?.value.id ?? '';
    expect(await store.incidents.getUpdate(accountId, incident.id, updateId)).toEqual(resolved?.value);
    expect((await store.incidents.listUpdates(accountId, incident.id, 10))?.map((u) => u.id)).toEqual([
      updateId,
      incident.updates[0]?.id,
    ]);
    expect(await store.incidents.listUpdates(accountId, incident.id, 1)).toHaveLength(1);

    const reopened = await store.incidents.replaceUpdate(
      accountId,
      incident.id,
      updateId,
      updateInput('2026-01-01T10:30:00.000Z', { status: 'MONITORING' }),
    );
    expect(reopened?.value.status).toBe('MONITORING');
    expect(await store.incidents.get(accountId, incident.id)).toMatchObject({
      lastUpdateStatus: 'MONITORING',
      duration: null,
    });
    expect(await store.incidents.deleteUpdate(accountId, incident.id, updateId)).toBe(true);
    expect(await store.incidents.deleteUpdate(accountId, incident.id, updateId)).toBe(false);
    expect(await store.incidents.get(accountId, incident.id)).toMatchObject({ lastUpdateStatus: 'INVESTIGATING' });

    const later = await store.incidents.create(accountId, {
      name: 'Later',
      severity: 'MINOR',
      serviceIds: [],
      update: updateInput('2026-01-02T00:00:00.000Z'),
    });
    const newest = await store.incidents.list(accountId, { limit: 1 });
    expect(newest.entries.map((i) => i.id)).toEqual([later.value.id]);
    expect(
      (await store.incidents.list(accountId, { limit: 1, nextId: newest.nextId ?? '' })).entries.map((i) => i.id),
    ).toEqual([incident.id]);

    const other = (await store.accounts.create('Other')).account.id;
    expect(await store.incidents.get(other, incident.id)).toBeUndefined();
    expect(
      await store.incidents.addUpdate(other, incident.id, updateInput('2026-01-03T00:00:00.000Z')),
    ).toBeUndefined();
    expect(await store.incidents.delete(other, incident.id)).toBe(false);
    expect(await store.incidents.delete(accountId, incident.id)).toBe(true);
    expect(await store.incidents.get(accountId, incident.id)).toBeUndefined();
  });

  it('lists the unresolved incidents of each page by the services on its cards', async () => {
    const api = await store.statusPageServices.create(accountId, 'API');
    const web = await store.statusPageServices.create(accountId, 'Web');
    const apiPage = await store.statusPages.create(accountId, pageInput('api', [{ name: 'c', serviceIds: [api.id] }]));
    const bothPage = await store.statusPages.create(
      accountId,
      pageInput('both', [{ name: 'c', serviceIds: [api.id, web.id] }]),
    );
    const onApi = await store.incidents.create(accountId, {
      name: 'A',
      severity: 'MINOR',
      serviceIds: [api.id],
      update: updateInput('2026-01-01T00:00:00.000Z'),
    });
    const onWeb = await store.incidents.create(accountId, {
      name: 'W',
      severity: 'MINOR',
      serviceIds: [web.id],
      update: updateInput('2026-01-01T00:00:00.000Z'),
    });
    await store.incidents.create(accountId, {
      name: 'Done',
      severity: 'MINOR',
      serviceIds: [api.id],
      update: updateInput('2026-01-01T00:00:00.000Z', { status: 'RESOLVED' }),
    });

    const byPage = await store.incidents.listUnresolvedByStatusPage(accountId, [apiPage.id, bothPage.id]);
    expect(byPage.get(apiPage.id)?.map((i) => i.name)).toEqual(['A']);
    expect(byPage.get(bothPage.id)?.map((i) => i.id)).toEqual([onWeb.value.id, onApi.value.id]);
    expect(await store.incidents.listUnresolvedByStatusPage(accountId, [])).toEqual(new Map());
  });

  it('keeps reader keys hashed: create, list, open, revoke, only for the owning account', async () => {
    const page = await store.statusPages.create(accountId, pageInput('private', [], { isPrivate: true }));
    const other = (await store.accounts.create('Other')).account.id;
    const created = await store.statusPageKeys.create(accountId, page.id);
    if (!created) throw new Error('the owner could not create a key');
    expect(await store.statusPageKeys.create(other, page.id)).toBeUndefined();
    expect(await store.statusPageKeys.list(accountId, page.id)).toEqual([created.record]);
    expect(await store.statusPageKeys.list(other, page.id)).toBeUndefined();
    expect(await store.statusPageKeys.opens(page.id, created.key)).toBe(true);
    expect(await store.statusPageKeys.opens(page.id, `${created.key}x`)).toBe(false);
    expect(await fresh.query('SELECT masked_key FROM status_page_keys')).toEqual([
      { masked_key: created.record.maskedKey },
    ]);

    expect(await store.statusPageKeys.revoke(other, page.id, created.record.id)).toBe(false);
    expect(await store.statusPageKeys.revoke(accountId, page.id, created.record.id)).toBe(true);
    expect(await store.statusPageKeys.opens(page.id, created.key)).toBe(false);
  });

  it('reads a public page: by address, its open incidents and worst severities, days, history pages and one incident', async () => {
    const api = await store.statusPageServices.create(accountId, 'API');
    const web = await store.statusPageServices.create(accountId, 'Web');
    const hidden = await store.statusPageServices.create(accountId, 'Hidden');
    const page = await store.statusPages.create(
      accountId,
      pageInput('acme', [{ name: 'c', serviceIds: [api.id, web.id] }], { customDomain: 'status.acme.test' }),
    );
    expect(await store.statusPageReads.findByAddress('url', 'ACME')).toEqual(page);
    expect(await store.statusPageReads.findByAddress('customDomain', 'Status.Acme.Test')).toEqual(page);
    expect(await store.statusPageReads.findByAddress('url', 'nope')).toBeUndefined();

    const incident = (
      name: string,
      severity: 'MINOR' | 'CRITICAL',
      serviceIds: string[],
      day: string,
      status: 'RESOLVED' | null = null,
    ) =>
      store.incidents.create(accountId, {
        name,
        severity,
        serviceIds,
        update: updateInput(`2026-01-${day}T12:00:00.000Z`, { status }),
      });
    const minor = (await incident('minor', 'MINOR', [api.id, web.id], '01')).value;
    const critical = (await incident('critical', 'CRITICAL', [api.id], '02')).value;
    const old = (await incident('old', 'MINOR', [web.id], '03', 'RESOLVED')).value;
    const elsewhere = (await incident('elsewhere', 'CRITICAL', [hidden.id], '04')).value;

    const scope = { accountId, serviceIds: [api.id, web.id] };
    expect((await store.statusPageReads.openIncidents(scope, 10)).map((i) => i.name)).toEqual(['critical', 'minor']);
    expect((await store.statusPageReads.openIncidents(scope, 1)).map((i) => i.name)).toEqual(['critical']);
    expect(await store.statusPageReads.openSeverities(scope)).toEqual(
      new Map([
        [api.id, 'CRITICAL'],
        [web.id, 'MINOR'],
      ]),
    );
    const days = await store.statusPageReads.startedSince(scope, '2026-01-02T00:00:00.000Z');
    expect(days.map((d) => [d.name, d.serviceId, d.startedAt])).toEqual([
      ['old', web.id, '2026-01-03T12:00:00.000Z'],
      ['critical', api.id, '2026-01-02T12:00:00.000Z'],
    ]);

    const first = await store.statusPageReads.history(scope, { limit: 2 });
    expect(first.entries.map((i) => i.id)).toEqual([old.id, critical.id]);
    const rest = await store.statusPageReads.history(scope, { limit: 2, nextId: first.nextId ?? '' });
    expect(rest).toEqual({ entries: [minor], nextId: null });
    await expect(store.statusPageReads.history(scope, { limit: 2, nextId: 'garbage' })).rejects.toBeInstanceOf(
      BadRequestError,
    );

    expect(await store.statusPageReads.incident(scope, minor.id)).toEqual(minor);
    expect(await store.statusPageReads.incident(scope, elsewhere.id)).toBeUndefined();
    expect(await store.statusPageReads.incident({ accountId, serviceIds: [] }, minor.id)).toBeUndefined();
  });

  it('moves the version on every change a rendered page shows, and only for that account', async () => {
    const other = (await store.accounts.create('Other')).account.id;
    const otherVersion = await store.statusPageReads.version(other);
    expect(await store.statusPageReads.version(accountId)).toBe(0);
    let last = 0;
    const moves = async (what: string, change: () => Promise<unknown>) => {
      await change();
      const now = await store.statusPageReads.version(accountId);
      expect(now, what).toBeGreaterThan(last);
      last = now;
    };
    const api = await store.statusPageServices.create(accountId, 'API');
    last = await store.statusPageReads.version(accountId);
    expect(last).toBeGreaterThan(0);
    const web = await store.statusPageServices.create(accountId, 'Web');
    await moves('service renamed', () => store.statusPageServices.update(accountId, api.id, 'Public API'));
    let pageId = '';
    await moves('page created', async () => {
      pageId = (await store.statusPages.create(accountId, pageInput('acme', [{ name: 'c', serviceIds: [api.id] }]))).id;
    });
    await moves('page cards replaced', () =>
      store.statusPages.update(accountId, pageId, pageInput('acme', [{ name: 'c', serviceIds: [api.id, web.id] }])),
    );
    let incidentId = '';
    await moves('incident created', async () => {
      incidentId = (
        await store.incidents.create(accountId, {
          name: 'I',
          severity: 'MINOR',
          serviceIds: [api.id],
          update: updateInput('2026-01-01T00:00:00.000Z'),
        })
      ).value.id;
    });
    await moves('incident services changed', () =>
      store.incidents.update(accountId, incidentId, { name: 'I', severity: 'MINOR', serviceIds: [web.id] }),
    );
    let updateId = '';
    await moves('update added', async () => {
      updateId =
        (await store.incidents.addUpdate(accountId, incidentId, updateInput('2026-01-01T01:00:00.000Z')))?.value.id ??
        '';
    });
    await moves('update replaced', () =>
      store.incidents.replaceUpdate(
        accountId,
        incidentId,
        updateId,
        updateInput('2026-01-01T01:00:00.000Z', { status: 'RESOLVED' }),
      ),
    );
    await moves('update deleted', () => store.incidents.deleteUpdate(accountId, incidentId, updateId));
    await moves('incident deleted', () => store.incidents.delete(accountId, incidentId));
    await moves('service deleted', () => store.statusPageServices.delete(accountId, web.id));
    await moves('page deleted', () => store.statusPages.delete(accountId, pageId));
    expect(await store.statusPageReads.version(other)).toBe(otherVersion);
  });
});
