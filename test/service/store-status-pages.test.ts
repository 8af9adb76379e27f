/**
 * The status page repositories at store level, on SQLite and on PostgreSQL: services, pages with
 * their cards, incidents with their updates, reader keys, the public page reads, and the version the
 * rendered pages are cached under (kept by migration 021's triggers).
 */
import { describe, expect, it } from 'vitest';
import { BadRequestError, ConflictError } from '../../src/service/http/errors.ts';
import { freshAccountEachTest } from '../support/fresh-account.ts';
import { pageInput, updateInput } from '../support/status-page-inputs.ts';
import { storeBackends } from '../support/store-backends.ts';

describe.each(storeBackends())('status page store on $name', (backend) => {
  const t = freshAccountEachTest(backend);

  it('creates, reads, renames, lists (whole and paged) and deletes services, per account', async () => {
    const api = await t.store.statusPageServices.create(t.accountId, 'API');
    const web = await t.store.statusPageServices.create(t.accountId, 'Web');
    const other = (await t.store.accounts.create('Other')).account.id;
    expect(await t.store.statusPageServices.get(t.accountId, api.id)).toEqual(api);
    expect(await t.store.statusPageServices.get(other, api.id)).toBeUndefined();

    const renamed = await t.store.statusPageServices.update(t.accountId, api.id, 'Public API');
    expect(renamed).toMatchObject({ id: api.id, name: 'Public API', updatedAt: expect.any(String) });
    expect(await t.store.statusPageServices.update(other, api.id, 'x')).toBeUndefined();

    expect(await t.store.statusPageServices.list(t.accountId, {})).toEqual({ entries: [renamed, web], nextId: null });
    const first = await t.store.statusPageServices.list(t.accountId, { limit: 1 });
    expect(first.entries).toEqual([renamed]);
    expect(await t.store.statusPageServices.list(t.accountId, { limit: 1, nextId: first.nextId ?? '' })).toEqual({
      entries: [web],
      nextId: null,
    });

    expect(await t.store.statusPageServices.delete(other, web.id)).toBe(false);
    expect(await t.store.statusPageServices.delete(t.accountId, web.id)).toBe(true);
    expect(await t.store.statusPageServices.list(t.accountId, {})).toEqual({ entries: [renamed], nextId: null });
  });

  it('creates a page with cards, replaces its cards keeping a card sent back by id, lists, pages and deletes', async () => {
    const api = await t.store.statusPageServices.create(t.accountId, 'API');
    const web = await t.store.statusPageServices.create(t.accountId, 'Web');
    const page = await t.store.statusPages.create(
      t.accountId,
      pageInput('Acme', [{ name: 'Core', serviceIds: [web.id, api.id] }], {
        isPrivate: true,
        whiteLabel: true,
        description: 'All of it',
      }),
    );
    expect(page).toMatchObject({ url: 'acme', isPrivate: true, whiteLabel: true, description: 'All of it' });
    expect(page.cards).toEqual([expect.objectContaining({ name: 'Core', services: [web, api] })]);
    expect(await t.store.statusPages.get(t.accountId, page.id)).toEqual(page);

    const core = page.cards[0]?.id;
    const updated = await t.store.statusPages.update(
      t.accountId,
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
    expect(await t.store.statusPages.update(t.accountId, 'no-such-page', pageInput('x', []))).toBeUndefined();

    const second = await t.store.statusPages.create(t.accountId, pageInput('second', []));
    const firstPage = await t.store.statusPages.list(t.accountId, { limit: 1 });
    expect(firstPage.entries).toEqual([updated]);
    expect(await t.store.statusPages.list(t.accountId, { limit: 1, nextId: firstPage.nextId ?? '' })).toEqual({
      entries: [second],
      nextId: null,
    });

    expect(await t.store.statusPages.delete(t.accountId, second.id)).toBe(true);
    expect(await t.store.statusPages.get(t.accountId, second.id)).toBeUndefined();
  });

  it('refuses a taken url or custom domain with a ConflictError naming the field, and a foreign service with a BadRequestError', async () => {
    await t.store.statusPages.create(t.accountId, pageInput('taken', [], { customDomain: 'status.acme.test' }));
    await expect(t.store.statusPages.create(t.accountId, pageInput('TAKEN', []))).rejects.toThrow(
      new ConflictError('body/url "TAKEN" is already used by another status page'),
    );
    await expect(
      t.store.statusPages.create(t.accountId, pageInput('free', [], { customDomain: 'Status.Acme.test' })),
    ).rejects.toThrow(new ConflictError('body/customDomain "Status.Acme.test" is already used by another status page'));
    const other = (await t.store.accounts.create('Other')).account.id;
    const foreign = await t.store.statusPageServices.create(other, 'Theirs');
    await expect(
      t.store.statusPages.create(t.accountId, pageInput('free', [{ name: 'c', serviceIds: [foreign.id] }])),
    ).rejects.toBeInstanceOf(BadRequestError);
    // Nothing of the refused pages was kept.
    expect((await t.store.statusPages.list(t.accountId, { limit: 10 })).entries.map((p) => p.url)).toEqual(['taken']);
  });

  it('keeps incidents and their updates: state follows the updates; lists, pages, replaces and deletes', async () => {
    const api = await t.store.statusPageServices.create(t.accountId, 'API');
    const web = await t.store.statusPageServices.create(t.accountId, 'Web');
    const created = await t.store.incidents.create(t.accountId, {
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

    const changed = await t.store.incidents.update(t.accountId, incident.id, {
      name: 'Big outage',
      severity: 'CRITICAL',
      serviceIds: [web.id, api.id],
    });
    expect(changed).toMatchObject({ name: 'Big outage', severity: 'CRITICAL', services: [web, api] });

    const resolved = await t.store.incidents.addUpdate(
      t.accountId,
      incident.id,
      updateInput('2026-01-01T10:30:00.000Z', { status: 'RESOLVED' }),
    );
    expect(resolved?.value).toMatchObject({ incidentId: incident.id, status: 'RESOLVED' });
    expect(await t.store.incidents.get(t.accountId, incident.id)).toMatchObject({
      lastUpdateStatus: 'RESOLVED',
      duration: 30,
    });
    const updateId = resolved?.value.id ?? '';
    expect(await t.store.incidents.getUpdate(t.accountId, incident.id, updateId)).toEqual(resolved?.value);
    expect((await t.store.incidents.listUpdates(t.accountId, incident.id, 10))?.map((u) => u.id)).toEqual([
      updateId,
      incident.updates[0]?.id,
    ]);
    expect(await t.store.incidents.listUpdates(t.accountId, incident.id, 1)).toHaveLength(1);

    const reopened = await t.store.incidents.replaceUpdate(
      t.accountId,
      incident.id,
      updateId,
      updateInput('2026-01-01T10:30:00.000Z', { status: 'MONITORING' }),
    );
    expect(reopened?.value.status).toBe('MONITORING');
    expect(await t.store.incidents.get(t.accountId, incident.id)).toMatchObject({
      lastUpdateStatus: 'MONITORING',
      duration: null,
    });
    expect(await t.store.incidents.deleteUpdate(t.accountId, incident.id, updateId)).toBe(true);
    expect(await t.store.incidents.deleteUpdate(t.accountId, incident.id, updateId)).toBe(false);
    expect(await t.store.incidents.get(t.accountId, incident.id)).toMatchObject({ lastUpdateStatus: 'INVESTIGATING' });

    const later = await t.store.incidents.create(t.accountId, {
      name: 'Later',
      severity: 'MINOR',
      serviceIds: [],
      update: updateInput('2026-01-02T00:00:00.000Z'),
    });
    const newest = await t.store.incidents.list(t.accountId, { limit: 1 });
    expect(newest.entries.map((i) => i.id)).toEqual([later.value.id]);
    expect(
      (await t.store.incidents.list(t.accountId, { limit: 1, nextId: newest.nextId ?? '' })).entries.map((i) => i.id),
    ).toEqual([incident.id]);

    const other = (await t.store.accounts.create('Other')).account.id;
    expect(await t.store.incidents.get(other, incident.id)).toBeUndefined();
    expect(
      await t.store.incidents.addUpdate(other, incident.id, updateInput('2026-01-03T00:00:00.000Z')),
    ).toBeUndefined();
    expect(await t.store.incidents.delete(other, incident.id)).toBe(false);
    expect(await t.store.incidents.delete(t.accountId, incident.id)).toBe(true);
    expect(await t.store.incidents.get(t.accountId, incident.id)).toBeUndefined();
  });

  it('lists the unresolved incidents of each page by the services on its cards', async () => {
    const api = await t.store.statusPageServices.create(t.accountId, 'API');
    const web = await t.store.statusPageServices.create(t.accountId, 'Web');
    const apiPage = await t.store.statusPages.create(
      t.accountId,
      pageInput('api', [{ name: 'c', serviceIds: [api.id] }]),
    );
    const bothPage = await t.store.statusPages.create(
      t.accountId,
      pageInput('both', [{ name: 'c', serviceIds: [api.id, web.id] }]),
    );
    const onApi = await t.store.incidents.create(t.accountId, {
      name: 'A',
      severity: 'MINOR',
      serviceIds: [api.id],
      update: updateInput('2026-01-01T00:00:00.000Z'),
    });
    const onWeb = await t.store.incidents.create(t.accountId, {
      name: 'W',
      severity: 'MINOR',
      serviceIds: [web.id],
      update: updateInput('2026-01-01T00:00:00.000Z'),
    });
    await t.store.incidents.create(t.accountId, {
      name: 'Done',
      severity: 'MINOR',
      serviceIds: [api.id],
      update: updateInput('2026-01-01T00:00:00.000Z', { status: 'RESOLVED' }),
    });

    const byPage = await t.store.incidents.listUnresolvedByStatusPage(t.accountId, [apiPage.id, bothPage.id]);
    expect(byPage.get(apiPage.id)?.map((i) => i.name)).toEqual(['A']);
    expect(byPage.get(bothPage.id)?.map((i) => i.id)).toEqual([onWeb.value.id, onApi.value.id]);
    expect(await t.store.incidents.listUnresolvedByStatusPage(t.accountId, [])).toEqual(new Map());
  });

  it('keeps reader keys hashed: create, list, open, revoke, only for the owning account', async () => {
    const page = await t.store.statusPages.create(t.accountId, pageInput('private', [], { isPrivate: true }));
    const other = (await t.store.accounts.create('Other')).account.id;
    const created = await t.store.statusPageKeys.create(t.accountId, page.id);
    if (!created) throw new Error('the owner could not create a key');
    expect(await t.store.statusPageKeys.create(other, page.id)).toBeUndefined();
    expect(await t.store.statusPageKeys.list(t.accountId, page.id)).toEqual([created.record]);
    expect(await t.store.statusPageKeys.list(other, page.id)).toBeUndefined();
    expect(await t.store.statusPageKeys.opens(page.id, created.key)).toBe(true);
    expect(await t.store.statusPageKeys.opens(page.id, `${created.key}x`)).toBe(false);
    expect(await t.fresh.query('SELECT masked_key FROM status_page_keys')).toEqual([
      { masked_key: created.record.maskedKey },
    ]);

    expect(await t.store.statusPageKeys.revoke(other, page.id, created.record.id)).toBe(false);
    expect(await t.store.statusPageKeys.revoke(t.accountId, page.id, created.record.id)).toBe(true);
    expect(await t.store.statusPageKeys.opens(page.id, created.key)).toBe(false);
  });

  it('reads a public page: by address, its open incidents and worst severities, days, history pages and one incident', async () => {
    const api = await t.store.statusPageServices.create(t.accountId, 'API');
    const web = await t.store.statusPageServices.create(t.accountId, 'Web');
    const hidden = await t.store.statusPageServices.create(t.accountId, 'Hidden');
    const page = await t.store.statusPages.create(
      t.accountId,
      pageInput('acme', [{ name: 'c', serviceIds: [api.id, web.id] }], { customDomain: 'status.acme.test' }),
    );
    expect(await t.store.statusPageReads.findByAddress('url', 'ACME')).toEqual(page);
    expect(await t.store.statusPageReads.findByAddress('customDomain', 'Status.Acme.Test')).toEqual(page);
    expect(await t.store.statusPageReads.findByAddress('url', 'nope')).toBeUndefined();

    const incident = (
      name: string,
      severity: 'MINOR' | 'CRITICAL',
      serviceIds: string[],
      day: string,
      status: 'RESOLVED' | null = null,
    ) =>
      t.store.incidents.create(t.accountId, {
        name,
        severity,
        serviceIds,
        update: updateInput(`2026-01-${day}T12:00:00.000Z`, { status }),
      });
    const minor = (await incident('minor', 'MINOR', [api.id, web.id], '01')).value;
    const critical = (await incident('critical', 'CRITICAL', [api.id], '02')).value;
    const old = (await incident('old', 'MINOR', [web.id], '03', 'RESOLVED')).value;
    const elsewhere = (await incident('elsewhere', 'CRITICAL', [hidden.id], '04')).value;

    const scope = { accountId: t.accountId, serviceIds: [api.id, web.id] };
    expect((await t.store.statusPageReads.openIncidents(scope, 10)).map((i) => i.name)).toEqual(['critical', 'minor']);
    expect((await t.store.statusPageReads.openIncidents(scope, 1)).map((i) => i.name)).toEqual(['critical']);
    expect(await t.store.statusPageReads.openSeverities(scope)).toEqual(
      new Map([
        [api.id, 'CRITICAL'],
        [web.id, 'MINOR'],
      ]),
    );
    const days = await t.store.statusPageReads.startedSince(scope, '2026-01-02T00:00:00.000Z');
    expect(days.map((d) => [d.name, d.serviceId, d.startedAt])).toEqual([
      ['old', web.id, '2026-01-03T12:00:00.000Z'],
      ['critical', api.id, '2026-01-02T12:00:00.000Z'],
    ]);

    const first = await t.store.statusPageReads.history(scope, { limit: 2 });
    expect(first.entries.map((i) => i.id)).toEqual([old.id, critical.id]);
    const rest = await t.store.statusPageReads.history(scope, { limit: 2, nextId: first.nextId ?? '' });
    expect(rest).toEqual({ entries: [minor], nextId: null });
    await expect(t.store.statusPageReads.history(scope, { limit: 2, nextId: 'garbage' })).rejects.toBeInstanceOf(
      BadRequestError,
    );

    expect(await t.store.statusPageReads.incident(scope, minor.id)).toEqual(minor);
    expect(await t.store.statusPageReads.incident(scope, elsewhere.id)).toBeUndefined();
    expect(
      await t.store.statusPageReads.incident({ accountId: t.accountId, serviceIds: [] }, minor.id),
    ).toBeUndefined();
  });

  it('moves the version on every change a rendered page shows, and only for that account', async () => {
    const other = (await t.store.accounts.create('Other')).account.id;
    const otherVersion = await t.store.statusPageReads.version(other);
    expect(await t.store.statusPageReads.version(t.accountId)).toBe(0);
    let last = 0;
    const moves = async (what: string, change: () => Promise<unknown>) => {
      await change();
      const now = await t.store.statusPageReads.version(t.accountId);
      expect(now, what).toBeGreaterThan(last);
      last = now;
    };
    const api = await t.store.statusPageServices.create(t.accountId, 'API');
    last = await t.store.statusPageReads.version(t.accountId);
    expect(last).toBeGreaterThan(0);
    const web = await t.store.statusPageServices.create(t.accountId, 'Web');
    await moves('service renamed', () => t.store.statusPageServices.update(t.accountId, api.id, 'Public API'));
    let pageId = '';
    await moves('page created', async () => {
      pageId = (await t.store.statusPages.create(t.accountId, pageInput('acme', [{ name: 'c', serviceIds: [api.id] }])))
        .id;
    });
    await moves('page cards replaced', () =>
      t.store.statusPages.update(t.accountId, pageId, pageInput('acme', [{ name: 'c', serviceIds: [api.id, web.id] }])),
    );
    let incidentId = '';
    await moves('incident created', async () => {
      incidentId = (
        await t.store.incidents.create(t.accountId, {
          name: 'I',
          severity: 'MINOR',
          serviceIds: [api.id],
          update: updateInput('2026-01-01T00:00:00.000Z'),
        })
      ).value.id;
    });
    await moves('incident services changed', () =>
      t.store.incidents.update(t.accountId, incidentId, { name: 'I', severity: 'MINOR', serviceIds: [web.id] }),
    );
    let updateId = '';
    await moves('update added', async () => {
      updateId =
        (await t.store.incidents.addUpdate(t.accountId, incidentId, updateInput('2026-01-01T01:00:00.000Z')))?.value
          .id ?? '';
    });
    await moves('update replaced', () =>
      t.store.incidents.replaceUpdate(
        t.accountId,
        incidentId,
        updateId,
        updateInput('2026-01-01T01:00:00.000Z', { status: 'RESOLVED' }),
      ),
    );
    await moves('update deleted', () => t.store.incidents.deleteUpdate(t.accountId, incidentId, updateId));
    await moves('incident deleted', () => t.store.incidents.delete(t.accountId, incidentId));
    await moves('service deleted', () => t.store.statusPageServices.delete(t.accountId, web.id));
    await moves('page deleted', () => t.store.statusPages.delete(t.accountId, pageId));
    expect(await t.store.statusPageReads.version(other)).toBe(otherVersion);
  });
});
