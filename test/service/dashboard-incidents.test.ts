import { describe, expect } from 'vitest';
import { json } from '../helpers/public-api.ts';
import { apiTest } from '../support/api-test.ts';

interface UpdateView {
  id: string;
  incidentId: string;
  status: string;
  description: string;
  created_at: string;
  updated_at: string | null;
}
interface IncidentView {
  id: string;
  name: string;
  impact: string;
  dashboardId: number;
  startedAt: string | null;
  stoppedAt: string | null;
  created_at: string;
  updated_at: string | null;
  incidentUpdates?: UpdateView[];
}

const firstUpdate = [{ status: 'INVESTIGATING', description: 'Elevated errors on checkout' }];

/**
 * apiTest with Acme's dashboard made before every test, `create` (POST /v1/incidents as Acme unless
 * told) and `createOk` (an incident "Checkout down" on the dashboard, failing the test unless 200).
 */
const it = apiTest
  .extend('dashboardId', { auto: true }, async ({ api, acme }) => {
    const d = await api.request(acme, 'POST', '/v1/dashboards', { header: 'Acme' });
    return json<{ id: number }>(d).id;
  })
  .extend(
    'create',
    ({ api, acme }) =>
      (payload: Record<string, unknown>, account = acme) =>
        api.request(account, 'POST', '/v1/incidents', payload),
  )
  .extend('createOk', ({ create, dashboardId }) => async (payload: Record<string, unknown> = {}) => {
    const res = await create({
      name: 'Checkout down',
      impact: 'MAJOR',
      dashboardId,
      incidentUpdates: firstUpdate,
      ...payload,
    });
    expect(res.statusCode, res.body).toBe(200);
    return json<IncidentView>(res);
  });

describe('dashboard incidents (/v1/incidents)', () => {
  it('creates an incident with exactly one update; startedAt defaults to the time of the request', async ({
    dashboardId,
    createOk,
  }) => {
    const before = Date.now();
    const incident = await createOk();
    expect(incident).toMatchObject({
      name: 'Checkout down',
      impact: 'MAJOR',
      dashboardId,
      stoppedAt: null,
      updated_at: null,
    });
    expect(Date.parse(incident.startedAt ?? '')).toBeGreaterThanOrEqual(before - 1);
    expect(incident.incidentUpdates).toEqual([
      {
        id: expect.any(String),
        incidentId: incident.id,
        status: 'INVESTIGATING',
        description: 'Elevated errors on checkout',
        created_at: expect.any(String),
        updated_at: null,
      },
    ]);
  });

  it('refuses bad bodies with a 400 that names the field', async ({ dashboardId, create }) => {
    const base = { name: 'x', impact: 'MINOR', dashboardId, incidentUpdates: firstUpdate };
    const cases: Array<[Record<string, unknown>, RegExp]> = [
      [{ incidentUpdates: [] }, /body\/incidentUpdates must NOT have fewer than 1 items/],
      [{ incidentUpdates: [...firstUpdate, ...firstUpdate] }, /body\/incidentUpdates must NOT have more than 1 items/],
      [{ impact: 'CRITICAL' }, /body\/impact must be one of MAINTENANCE, MAJOR, MINOR/],
      [
        { incidentUpdates: [{ status: 'DONE', description: 'x' }] },
        /body\/incidentUpdates\/0\/status must be one of INVESTIGATING, IDENTIFIED, MONITORING, RESOLVED, MAINTENANCE/,
      ],
      [{ startedAt: '2026-05-02T00:00:00Z', stoppedAt: '2026-05-01T00:00:00Z' }, /stoppedAt must not be before/],
      [{ startedAt: 'yesterday' }, /body\/startedAt/],
      [{ name: undefined }, /body\/name is required/],
    ];
    for (const [extra, message] of cases) {
      const res = await create({ ...base, ...extra });
      expect(res.statusCode, JSON.stringify(extra)).toBe(400);
      expect(json(res).message).toMatch(message);
    }
  });

  it('refuses another account’s dashboard without revealing it exists', async ({ other, dashboardId, create }) => {
    const res = await create({ name: 'x', impact: 'MINOR', dashboardId, incidentUpdates: firstUpdate }, other);
    expect(res.statusCode).toBe(400);
    expect(json(res).message).toBe(`body/dashboardId: no dashboard with id ${dashboardId} in this account`);
    const unknown = await create({ name: 'x', impact: 'MINOR', dashboardId: 987654, incidentUpdates: firstUpdate });
    expect(json(unknown).message).toBe('body/dashboardId: no dashboard with id 987654 in this account');
  });

  it('reads the latest update by default and all of them, newest first, with includeAllIncidentUpdates', async ({
    api,
    acme,
    createOk,
  }) => {
    const incident = await createOk();
    const add = await api.request(acme, 'POST', `/v1/incidents/${incident.id}/updates`, {
      status: 'RESOLVED',
      description: 'Fixed',
    });
    expect(add.statusCode, add.body).toBe(201);
    expect(json<UpdateView>(add)).toMatchObject({
      incidentId: incident.id,
      status: 'RESOLVED',
      description: 'Fixed',
      updated_at: null,
    });

    const latest = json<IncidentView>(await api.request(acme, 'GET', `/v1/incidents/${incident.id}`));
    expect(latest.incidentUpdates?.map((u) => u.status)).toEqual(['RESOLVED']);
    const all = await api.request(acme, 'GET', `/v1/incidents/${incident.id}?includeAllIncidentUpdates=true`);
    expect(json<IncidentView>(all).incidentUpdates?.map((u) => u.status)).toEqual(['RESOLVED', 'INVESTIGATING']);
  });

  it('updates the incident (without its updates in the response) and edits and deletes updates', async ({
    api,
    acme,
    createOk,
  }) => {
    const incident = await createOk();
    const put = await api.request(acme, 'PUT', `/v1/incidents/${incident.id}?probe=true`, {
      name: 'Checkout degraded',
      impact: 'MINOR',
      stoppedAt: '2099-01-01T00:00:00.000Z',
    });
    expect(put.statusCode, put.body).toBe(200);
    const updated = json<IncidentView>(put);
    expect(updated).toMatchObject({
      name: 'Checkout degraded',
      impact: 'MINOR',
      startedAt: incident.startedAt,
      stoppedAt: '2099-01-01T00:00:00.000Z',
    });
    expect(updated.updated_at).not.toBeNull();
    expect(updated.incidentUpdates).toBeUndefined();

    const firstId = incident.incidentUpdates?.[0]?.id ?? '';
    const edit = await api.request(acme, 'PUT', `/v1/incidents/${incident.id}/updates/${firstId}`, {
      description: 'Errors on checkout (EU only)',
    });
    expect(edit.statusCode, edit.body).toBe(200);
    expect(json<UpdateView>(edit)).toMatchObject({
      id: firstId,
      status: 'INVESTIGATING',
      description: 'Errors on checkout (EU only)',
      updated_at: expect.any(String),
    });

    // The only update cannot go: an incident always has one.
    const lonely = await api.request(acme, 'DELETE', `/v1/incidents/${incident.id}/updates/${firstId}`);
    expect(lonely.statusCode).toBe(400);
    expect(json(lonely).message).toMatch(/at least one update/);
    await api.request(acme, 'POST', `/v1/incidents/${incident.id}/updates`, {
      status: 'MONITORING',
      description: 'Watching',
    });
    const del = await api.request(acme, 'DELETE', `/v1/incidents/${incident.id}/updates/${firstId}`);
    expect(del.statusCode).toBe(204);
    const again = await api.request(acme, 'DELETE', `/v1/incidents/${incident.id}/updates/${firstId}`);
    expect(again.statusCode).toBe(404);
  });

  it('is 404 for another account’s incident on every operation, and deleting removes it', async ({
    api,
    acme,
    other,
    createOk,
  }) => {
    const incident = await createOk();
    const updateId = incident.incidentUpdates?.[0]?.id ?? '';
    for (const [method, url, payload] of [
      ['GET', `/v1/incidents/${incident.id}`, undefined],
      ['PUT', `/v1/incidents/${incident.id}`, { name: 'x', impact: 'MINOR' }],
      ['DELETE', `/v1/incidents/${incident.id}`, undefined],
      ['POST', `/v1/incidents/${incident.id}/updates`, { status: 'RESOLVED', description: 'x' }],
      ['PUT', `/v1/incidents/${incident.id}/updates/${updateId}`, { description: 'x' }],
      ['DELETE', `/v1/incidents/${incident.id}/updates/${updateId}`, undefined],
    ] as const) {
      const res = await api.request(other, method, url, payload);
      expect(res.statusCode, `${method} ${url}`).toBe(404);
    }
    expect((await api.request(acme, 'DELETE', `/v1/incidents/${incident.id}`)).statusCode).toBe(204);
    expect((await api.request(acme, 'GET', `/v1/incidents/${incident.id}`)).statusCode).toBe(404);
  });

  it('goes with its dashboard when the dashboard is deleted', async ({ api, acme, dashboardId, createOk }) => {
    const incident = await createOk();
    await api.request(acme, 'DELETE', `/v1/dashboards/${dashboardId}`);
    expect((await api.request(acme, 'GET', `/v1/incidents/${incident.id}`)).statusCode).toBe(404);
  });
});
