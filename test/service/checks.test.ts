import { describe, expect } from 'vitest';
import { toCheckDefinition } from '../../src/service/checks/definition.ts';
import { json } from '../helpers/public-api.ts';
import { apiRequest } from '../support/accounts-check-bodies.ts';
import { checkDefaults, type CheckView, checksTest as it } from '../support/api-test.ts';

const minimal = { name: 'Home page', request: { method: 'GET', url: 'https://example.test/' } };

describe('API checks', () => {
  it('fills in the reference defaults on create and returns them on GET', async ({ api, acme, createCheck }) => {
    const created = await createCheck('/v1/checks/api', { ...minimal, privateLocations: ['office'] });
    expect(created).toEqual({
      ...checkDefaults,
      name: 'Home page',
      checkType: 'API',
      degradedResponseTime: 5000,
      maxResponseTime: 20000,
      // Snippets and scripts (docs/secrets.md).
      setupSnippetId: null,
      tearDownSnippetId: null,
      localSetupScript: null,
      localTearDownScript: null,
      request: apiRequest({ url: 'https://example.test/' }),
    });
    expect(json(await api.request(acme, 'GET', `/v1/checks/${created.id}`))).toEqual(created);
    // The scheduler hears about it, with the location resolved to its id.
    const location = await api.store.locations.getBySlug(acme.accountId, 'office');
    expect(api.hookCalls).toEqual([
      {
        accountId: acme.accountId,
        checkId: created.id,
        check: expect.objectContaining({ locationIds: [location?.id] }),
      },
    ]);
  });

  it.for<[object, string]>([
    [
      { ...minimal, request: { ...minimal.request, method: 'FETCH' } },
      'body/request/method must be one of GET, POST, PUT, HEAD, DELETE, PATCH',
    ],
    [{ name: 'x', request: { method: 'GET' } }, 'body/request/url is required'],
    [{ request: minimal.request }, 'body/name is required'],
    [
      { ...minimal, frequency: 3 },
      'body/frequency must be one of 0, 1, 2, 5, 10, 15, 30, 60, 120, 180, 360, 720, 1440',
    ],
    [{ ...minimal, maxResponseTime: 45001 }, 'body/maxResponseTime must be <= 45000'],
    [{ ...minimal, frequency: 0 }, 'body/frequencyOffset must be one of 10, 20, 30 (seconds) when frequency is 0'],
    [
      { ...minimal, frequency: 0, frequencyOffset: 15 },
      'body/frequencyOffset must be one of 10, 20, 30 (seconds) when frequency is 0',
    ],
    [
      { ...minimal, privateLocations: ['office', 'attic'] },
      'body/privateLocations: no private location with slugName "attic" in this account',
    ],
  ])('answers 400 naming the field for %j', async ([body, message], { api, acme }) => {
    const res = await api.request(acme, 'POST', '/v1/checks/api', body);
    expect(res.statusCode).toBe(400);
    expect(json(res)).toEqual({ statusCode: 400, error: 'Bad Request', message });
    expect(api.hookCalls).toEqual([]);
  });

  it('accepts a sub-minute check with a valid frequencyOffset', async ({ api, acme, createCheck }) => {
    const created = await createCheck('/v1/checks/api', { ...minimal, frequency: 0, frequencyOffset: 20 });
    expect(created).toMatchObject({ frequency: 0, frequencyOffset: 20 });
    expect(await api.store.checks.get(acme.accountId, created.id)).toMatchObject({ frequency: 0, frequencyOffset: 20 });
  });

  it("does not accept another account's location slug", async ({ api, acme, other }) => {
    await api.request(other, 'POST', '/v1/private-locations', { name: 'Basement', slugName: 'basement' });
    const res = await api.request(acme, 'POST', '/v1/checks/api', { ...minimal, privateLocations: ['basement'] });
    expect(res.statusCode).toBe(400);
    expect(json(res).message).toContain('"basement"');
  });

  it('updates only the given properties, merging request, and tells the scheduler', async ({
    api,
    acme,
    createCheck,
  }) => {
    const created = await createCheck('/v1/checks/api', { ...minimal, tags: ['web'] });
    const res = await api.request(acme, 'PUT', `/v1/checks/api/${created.id}`, {
      activated: false,
      privateLocations: ['office'],
      request: { method: 'HEAD' },
    });
    expect(res.statusCode).toBe(200);
    const updated = json<CheckView>(res);
    expect(updated).toMatchObject({ name: 'Home page', tags: ['web'], activated: false, privateLocations: ['office'] });
    expect(updated.request).toMatchObject({ method: 'HEAD', url: 'https://example.test/', followRedirects: true });
    expect(updated.updated_at).toEqual(expect.any(String));
    expect(api.hookCalls.at(-1)).toMatchObject({ checkId: created.id, check: { activated: false } });
  });

  it('validates the merged result of an update', async ({ api, acme, createCheck }) => {
    const created = await createCheck('/v1/checks/api', minimal);
    const res = await api.request(acme, 'PUT', `/v1/checks/api/${created.id}`, { frequency: 0 });
    expect(res.statusCode).toBe(400);
    expect(json(res).message).toMatch(/^body\/frequencyOffset/);
  });

  it('lists with limit and page, and filters by checkType', async ({ api, acme, createCheck }) => {
    const ids: string[] = [];
    for (const name of ['a', 'b', 'c']) ids.push((await createCheck('/v1/checks/api', { ...minimal, name })).id);
    const page = async (query: string) =>
      json<CheckView[]>(await api.request(acme, 'GET', `/v1/checks${query}`)).map((c) => c.id);
    expect(await page('')).toEqual(ids);
    expect(await page('?limit=2')).toEqual(ids.slice(0, 2));
    expect(await page('?limit=2&page=2')).toEqual(ids.slice(2));
    expect(await page('?checkType=API&limit=1&page=3')).toEqual(ids.slice(2));
    expect(await page('?checkType=BROWSER')).toEqual([]);
    const bad = await api.request(acme, 'GET', '/v1/checks?limit=0');
    expect(bad.statusCode).toBe(400);
    expect(json(bad).message).toBe('querystring/limit must be >= 1');
  });

  it('deletes with 204, tells the scheduler, and then answers 404', async ({ api, acme, createCheck }) => {
    const created = await createCheck('/v1/checks/api', minimal);
    const res = await api.request(acme, 'DELETE', `/v1/checks/${created.id}`);
    expect(res.statusCode).toBe(204);
    expect(res.body).toBe('');
    expect(api.hookCalls.at(-1)).toEqual({ accountId: acme.accountId, checkId: created.id, check: undefined });
    expect((await api.request(acme, 'GET', `/v1/checks/${created.id}`)).statusCode).toBe(404);
    expect((await api.request(acme, 'DELETE', `/v1/checks/${created.id}`)).statusCode).toBe(404);
  });

  it("answers 404 for another account's check on every route, and changes nothing", async ({
    api,
    acme,
    other,
    createCheck,
  }) => {
    const created = await createCheck('/v1/checks/api', minimal);
    const hooksBefore = api.hookCalls.length;
    for (const res of [
      await api.request(other, 'GET', `/v1/checks/${created.id}`),
      await api.request(other, 'PUT', `/v1/checks/api/${created.id}`, { name: 'mine' }),
      await api.request(other, 'DELETE', `/v1/checks/${created.id}`),
      await api.request(other, 'GET', `/v2/check-results/${created.id}`),
    ]) {
      expect(res.statusCode).toBe(404);
      expect(json(res)).toEqual({ statusCode: 404, error: 'Not Found', message: 'Check not found' });
    }
    expect(json<CheckView[]>(await api.request(other, 'GET', '/v1/checks'))).toEqual([]);
    expect(json<CheckView>(await api.request(acme, 'GET', `/v1/checks/${created.id}`)).name).toBe('Home page');
    expect(api.hookCalls).toHaveLength(hooksBefore);
  });
});

describe('toCheckDefinition', () => {
  it('turns a stored API check into the job definition the agent runs', async ({ api, acme, createCheck }) => {
    const created = await createCheck('/v1/checks/api', {
      ...minimal,
      shouldFail: true,
      runtimeId: '2026.04',
      degradedResponseTime: null,
      request: {
        ...minimal.request,
        headers: [{ key: 'X-Env', value: 'prod', locked: true }],
        assertions: [{ source: 'STATUS_CODE', comparison: 'EQUALS', target: '200' }],
      },
    });
    const stored = await api.store.checks.get(acme.accountId, created.id);
    if (!stored) throw new Error('check not stored');
    expect(toCheckDefinition(stored)).toEqual({
      id: created.id,
      accountId: acme.accountId,
      name: 'Home page',
      checkType: 'API',
      shouldFail: true,
      runtimeId: '2026.04',
      degradedResponseTime: 5000,
      maxResponseTime: 20000,
      request: apiRequest({
        url: 'https://example.test/',
        headers: [{ key: 'X-Env', value: 'prod' }],
        assertions: [{ source: 'STATUS_CODE', comparison: 'EQUALS', property: '', target: '200', regex: null }],
      }),
    });
  });
});
