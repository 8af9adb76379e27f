/**
 * Status page incidents and incident updates: operations 2 to 9 of the spec (plus the DELETEs of
 * the reference) through the public API on a real SQLite store.
 */
import { describe, expect } from 'vitest';
import { first, json } from '../helpers/public-api.ts';
import { apiTest } from '../support/api-test.ts';
import { expectBadRequestNaming } from '../support/bad-request.ts';
import { createService, expectLimitsRefused, type Paged, type ServiceView } from '../support/web-status-page-api.ts';

interface UpdateView {
  id: string;
  description: string;
  status?: string;
  publicIncidentUpdateDate: string;
  notifySubscribers: boolean;
  created_at: string;
}
interface IncidentView {
  id: string;
  name: string;
  severity: string;
  services: ServiceView[];
  incidentUpdates: UpdateView[];
  lastUpdateStatus: string;
  duration: number | null;
  created_at: string;
  updated_at?: string;
}

const INCIDENTS = '/v1/status-pages/incidents';

/**
 * apiTest with Acme's status page service "API" made before every test, `incidentBody` (an incident on
 * it), `createIncident` (as Acme unless told) and `addUpdate` (to one of Acme's incidents).
 */
const it = apiTest
  .extend('service', { auto: true }, ({ api, acme }) => createService(api, acme, 'API'))
  .extend('incidentBody', ({ service }) => (overrides: Record<string, unknown> = {}) => ({
    name: 'Checkout is slow',
    severity: 'MAJOR',
    services: [service],
    incidentUpdates: [{ description: 'Looking into it', status: 'INVESTIGATING' }],
    ...overrides,
  }))
  .extend(
    'createIncident',
    ({ api, acme, incidentBody }) =>
      async (overrides: Record<string, unknown> = {}, account = acme): Promise<IncidentView> => {
        const res = await api.request(account, 'POST', INCIDENTS, incidentBody(overrides));
        expect(res.statusCode, res.body).toBe(201);
        return json<IncidentView>(res);
      },
  )
  .extend('addUpdate', ({ api, acme }) => async (incidentId: string, payload: Record<string, unknown>) => {
    const res = await api.request(acme, 'POST', `${INCIDENTS}/${incidentId}/incident-updates`, payload);
    expect(res.statusCode, res.body).toBe(200);
    return json<UpdateView>(res);
  });

describe('incidents', () => {
  it('creates an incident with its first update and the defaults filled (operation 3), reads it (4)', async ({
    api,
    acme,
    service,
    createIncident,
  }) => {
    const before = Date.now();
    const incident = await createIncident();
    expect(incident).toMatchObject({
      name: 'Checkout is slow',
      severity: 'MAJOR',
      services: [{ id: service.id, name: 'API', accountId: acme.accountId }],
      lastUpdateStatus: 'INVESTIGATING',
      duration: null,
    });
    expect(incident.updated_at).toBeUndefined();
    const update = first(incident.incidentUpdates);
    expect(update).toMatchObject({ description: 'Looking into it', status: 'INVESTIGATING', notifySubscribers: false });
    // publicIncidentUpdateDate defaults to the time of the request.
    const published = Date.parse(update.publicIncidentUpdateDate);
    expect(published).toBeGreaterThanOrEqual(before - 1);
    expect(published).toBeLessThanOrEqual(Date.now() + 1);

    const got = await api.request(acme, 'GET', `${INCIDENTS}/${incident.id}`);
    expect(got.statusCode).toBe(200);
    expect(json<IncidentView>(got)).toEqual(incident);
  });

  it('validates the create body, naming the field', async ({ api, acme, incidentBody, createIncident }) => {
    const cases: [Record<string, unknown>, string][] = [
      [{ name: 'x'.repeat(256) }, 'body/name'],
      [{ name: undefined }, 'name'],
      [{ severity: 'HIGH' }, 'CRITICAL, MAJOR, MEDIUM, MINOR'],
      [{ services: [] }, 'body/services'],
      [{ incidentUpdates: undefined }, 'incidentUpdates'],
      [{ incidentUpdates: [] }, 'body/incidentUpdates'],
      [{ incidentUpdates: [{ status: 'RESOLVED' }] }, 'description'],
      [{ incidentUpdates: [{ description: 'x', status: 'DONE' }] }, 'INVESTIGATING, IDENTIFIED, MONITORING, RESOLVED'],
      [{ incidentUpdates: [{ description: 'x', publicIncidentUpdateDate: 'yesterday' }] }, 'publicIncidentUpdateDate'],
    ];
    for (const [overrides, mention] of cases) {
      const res = await api.request(acme, 'POST', INCIDENTS, incidentBody(overrides));
      expect(res.statusCode, JSON.stringify(overrides)).toBe(400);
      expect(json(res)).toMatchObject({ statusCode: 400, error: 'Bad Request' });
      expect(json(res).message).toContain(mention);
    }
    // 255 characters is still fine.
    await createIncident({ name: 'x'.repeat(255) });
  });

  it('refuses a service of another account or an unknown one with 400 naming its id', async ({
    api,
    acme,
    other,
    service,
    incidentBody,
  }) => {
    const theirs = await createService(api, other, 'Theirs');
    for (const svc of [theirs, { ...service, id: 'no-such-service' }]) {
      const res = await api.request(acme, 'POST', INCIDENTS, incidentBody({ services: [service, svc] }));
      expectBadRequestNaming(res, svc.id);
    }
    const list = json<Paged<IncidentView>>(await api.request(acme, 'GET', INCIDENTS));
    expect(list.length).toBe(0);
  });

  it('updates name, severity and services (operation 5); incidentUpdates in the body is a 400', async ({
    api,
    acme,
    service,
    createIncident,
  }) => {
    const incident = await createIncident();
    const db = await createService(api, acme, 'Database');
    const res = await api.request(acme, 'PUT', `${INCIDENTS}/${incident.id}`, {
      name: 'Checkout down',
      severity: 'CRITICAL',
      services: [db, service],
    });
    expect(res.statusCode).toBe(200);
    const updated = json<IncidentView>(res);
    expect(updated).toMatchObject({ name: 'Checkout down', severity: 'CRITICAL', lastUpdateStatus: 'INVESTIGATING' });
    expect(updated.services.map((s) => s.name)).toEqual(['Database', 'API']);
    expect(updated.incidentUpdates).toHaveLength(1);
    expect(updated.updated_at).toEqual(expect.any(String));

    const withUpdates = await api.request(acme, 'PUT', `${INCIDENTS}/${incident.id}`, {
      name: 'x',
      severity: 'MINOR',
      services: [service],
      incidentUpdates: [{ description: 'nope' }],
    });
    expectBadRequestNaming(withUpdates, 'incidentUpdates');

    const noServices = await api.request(acme, 'PUT', `${INCIDENTS}/${incident.id}`, {
      name: 'x',
      severity: 'MINOR',
      services: [],
    });
    expectBadRequestNaming(noServices, 'body/services');
  });

  it('lists newest first with limit 1..100 (default 20) and nextId paging to null (operation 2)', async ({
    api,
    acme,
    other,
    createIncident,
  }) => {
    const created: string[] = [];
    for (let i = 0; i < 23; i++) created.push((await createIncident({ name: `Incident ${i}` })).id);
    await createIncident({ services: [await createService(api, other, 'O')], name: 'theirs' }, other);

    const p1 = json<Paged<IncidentView>>(await api.request(acme, 'GET', INCIDENTS));
    expect(p1.length).toBe(20);
    expect(p1.entries.map((e) => e.id)).toEqual(created.slice().reverse().slice(0, 20));
    expect(first(p1.entries).incidentUpdates).toHaveLength(1);
    const p2 = json<Paged<IncidentView>>(await api.request(acme, 'GET', `${INCIDENTS}?nextId=${p1.nextId}`));
    expect(p2.entries.map((e) => e.id)).toEqual(created.slice(0, 3).reverse());
    expect(p2.nextId).toBeNull();

    const exact = json<Paged<IncidentView>>(await api.request(acme, 'GET', `${INCIDENTS}?limit=23`));
    expect(exact).toMatchObject({ length: 23, nextId: null });
    expect(json<Paged<IncidentView>>(await api.request(acme, 'GET', `${INCIDENTS}?limit=100`)).length).toBe(23);
    await expectLimitsRefused(api, acme, INCIDENTS, ['0', '101', 'ten']);
  });

  it("answers 404 for another account's incident on every operation", async ({
    api,
    acme,
    other,
    service,
    createIncident,
  }) => {
    const incident = await createIncident();
    const updateId = first(incident.incidentUpdates).id;
    const requests = [
      { method: 'GET', url: `${INCIDENTS}/${incident.id}` },
      {
        method: 'PUT',
        url: `${INCIDENTS}/${incident.id}`,
        payload: { name: 'x', severity: 'MINOR', services: [service] },
      },
      { method: 'DELETE', url: `${INCIDENTS}/${incident.id}` },
      { method: 'GET', url: `${INCIDENTS}/${incident.id}/incident-updates` },
      { method: 'POST', url: `${INCIDENTS}/${incident.id}/incident-updates`, payload: { description: 'x' } },
      { method: 'GET', url: `${INCIDENTS}/${incident.id}/incident-updates/${updateId}` },
      { method: 'PUT', url: `${INCIDENTS}/${incident.id}/incident-updates/${updateId}`, payload: { description: 'x' } },
      { method: 'DELETE', url: `${INCIDENTS}/${incident.id}/incident-updates/${updateId}` },
    ] as const;
    for (const r of requests) {
      const res = await api.app.inject({ ...r, headers: other.headers });
      expect(res.statusCode, `${r.method} ${r.url}`).toBe(404);
    }
    // The incident is untouched.
    const got = json<IncidentView>(await api.request(acme, 'GET', `${INCIDENTS}/${incident.id}`));
    expect(got).toEqual(incident);
  });

  it('deletes an incident with its updates', async ({ api, acme, createIncident }) => {
    const incident = await createIncident();
    expect((await api.request(acme, 'DELETE', `${INCIDENTS}/${incident.id}`)).statusCode).toBe(204);
    expect((await api.request(acme, 'GET', `${INCIDENTS}/${incident.id}`)).statusCode).toBe(404);
    const updates = await api.request(acme, 'GET', `${INCIDENTS}/${incident.id}/incident-updates`);
    expect(updates.statusCode).toBe(404);
  });
});

describe('incident updates', () => {
  it('adds (7), reads (8), updates (9) and lists (6) updates; lastUpdateStatus and duration follow', async ({
    api,
    acme,
    createIncident,
    addUpdate,
  }) => {
    const incident = await createIncident({
      incidentUpdates: [
        { description: 'Investigating', status: 'INVESTIGATING', publicIncidentUpdateDate: '2026-03-01T10:00:00Z' },
      ],
    });
    const identified = await addUpdate(incident.id, {
      description: 'Found it',
      status: 'IDENTIFIED',
      publicIncidentUpdateDate: '2026-03-01T10:20:00.000Z',
    });
    expect(identified).toMatchObject({ description: 'Found it', status: 'IDENTIFIED', notifySubscribers: false });
    let now = json<IncidentView>(await api.request(acme, 'GET', `${INCIDENTS}/${incident.id}`));
    expect(now).toMatchObject({ lastUpdateStatus: 'IDENTIFIED', duration: null });

    // An update without a status adds text only; the status stays.
    await addUpdate(incident.id, { description: 'Still on it', publicIncidentUpdateDate: '2026-03-01T10:30:00Z' });
    const resolved = await addUpdate(incident.id, {
      description: 'Fixed',
      status: 'RESOLVED',
      publicIncidentUpdateDate: '2026-03-01T11:35:30Z',
    });
    now = json<IncidentView>(await api.request(acme, 'GET', `${INCIDENTS}/${incident.id}`));
    // 10:00 to 11:35:30 is 95.5 minutes: whole minutes, rounded down.
    expect(now).toMatchObject({ lastUpdateStatus: 'RESOLVED', duration: 95 });
    expect(now.incidentUpdates.map((u) => u.description)).toEqual([
      'Fixed',
      'Still on it',
      'Found it',
      'Investigating',
    ]);

    // A backdated update does not become the newest one.
    await addUpdate(incident.id, {
      description: 'Late note',
      status: 'MONITORING',
      publicIncidentUpdateDate: '2026-03-01T10:25:00Z',
    });
    now = json<IncidentView>(await api.request(acme, 'GET', `${INCIDENTS}/${incident.id}`));
    expect(now).toMatchObject({ lastUpdateStatus: 'RESOLVED', duration: 95 });

    const url = `${INCIDENTS}/${incident.id}/incident-updates/${resolved.id}`;
    expect(json<UpdateView>(await api.request(acme, 'GET', url))).toEqual(resolved);

    // Reopening: changing the RESOLVED update to MONITORING clears the duration.
    const put = await api.request(acme, 'PUT', url, { description: 'Fix deployed', status: 'MONITORING' });
    expect(put.statusCode).toBe(200);
    // Left out, publicIncidentUpdateDate keeps its value.
    expect(json<UpdateView>(put)).toMatchObject({
      id: resolved.id,
      description: 'Fix deployed',
      status: 'MONITORING',
      publicIncidentUpdateDate: '2026-03-01T11:35:30.000Z',
    });
    now = json<IncidentView>(await api.request(acme, 'GET', `${INCIDENTS}/${incident.id}`));
    expect(now).toMatchObject({ lastUpdateStatus: 'MONITORING', duration: null });

    const list = await api.request(acme, 'GET', `${INCIDENTS}/${incident.id}/incident-updates`);
    expect(list.statusCode).toBe(200);
    expect(json<UpdateView[]>(list).map((u) => u.description)).toEqual([
      'Fix deployed',
      'Still on it',
      'Late note',
      'Found it',
      'Investigating',
    ]);

    const del = await api.request(acme, 'DELETE', url);
    expect(del.statusCode).toBe(204);
    now = json<IncidentView>(await api.request(acme, 'GET', `${INCIDENTS}/${incident.id}`));
    expect(now.lastUpdateStatus).toBe('MONITORING'); // the backdated "Late note" is now the newest with a status
  });

  it('lists at most the 100 latest updates', async ({ api, acme, createIncident, addUpdate }) => {
    const incident = await createIncident({
      incidentUpdates: [{ description: 'first', publicIncidentUpdateDate: '2025-12-31T00:00:00Z' }],
    });
    const base = Date.parse('2026-01-01T00:00:00Z');
    for (let i = 1; i <= 105; i++) {
      await addUpdate(incident.id, {
        description: `u${i}`,
        publicIncidentUpdateDate: new Date(base + i * 60_000).toISOString(),
      });
    }
    const list = json<UpdateView[]>(await api.request(acme, 'GET', `${INCIDENTS}/${incident.id}/incident-updates`));
    expect(list).toHaveLength(100);
    expect(first(list).description).toBe('u105');
    expect(list.at(-1)?.description).toBe('u6');
  });

  it('validates update bodies and answers 404 for an unknown update', async ({ api, acme, createIncident }) => {
    const incident = await createIncident();
    const base = `${INCIDENTS}/${incident.id}/incident-updates`;
    const cases: [Record<string, unknown>, string][] = [
      [{}, 'description'],
      [{ description: 'x', status: 'FIXED' }, 'INVESTIGATING, IDENTIFIED, MONITORING, RESOLVED'],
      [{ description: 'x', notifySubscribers: 'sometimes' }, 'notifySubscribers'],
    ];
    for (const [payload, mention] of cases) {
      const res = await api.request(acme, 'POST', base, payload);
      expectBadRequestNaming(res, mention);
    }
    const missing = await api.request(acme, 'GET', `${base}/no-such-update`);
    expect(missing.statusCode).toBe(404);
  });
});
