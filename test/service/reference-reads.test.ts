/**
 * The reads tools written for the reference API need (issue 15): the x-checkly-account header alias,
 * /next/accounts, /v1/locations, /v1/runtimes and /v2/checks with its filters, paging and
 * applyGroupSettings; each account sees only its own. The list filters' SQL is also run on both
 * store backends.
 */
import { readFileSync } from 'node:fs';
import { describe, expect } from 'vitest';
import { listRuntimes, packageRuntimesDir, readRuntimeCatalog } from '../../src/service/runtime-catalog.ts';
import { json, type TestAccount, type TestApi } from '../helpers/public-api.ts';
import { apiTest as it } from '../support/api-test.ts';
import { freshAccountEachTest } from '../support/fresh-account.ts';
import { storeBackends } from '../support/store-backends.ts';

it.beforeEach(async ({ api, acme, other }) => {
  for (const [account, slugName] of [
    [acme, 'office'],
    [acme, 'lab'],
    [other, 'elsewhere'],
  ] as const) {
    const res = await api.request(account, 'POST', '/v1/private-locations', { name: `Loc ${slugName}`, slugName });
    expect(res.statusCode, res.body).toBe(201);
  }
});

type CheckView = Record<string, unknown> & { id: string; name: string };

const get = (api: TestApi, account: TestAccount, url: string) => api.request(account, 'GET', url);

/** A request with the given headers instead of the account's own. */
const getWith = (api: TestApi, headers: Record<string, string>, url: string) =>
  api.app.inject({ method: 'GET', url, headers });

async function apiCheck(
  api: TestApi,
  account: TestAccount,
  name: string,
  url: string,
  extra: Record<string, unknown> = {},
): Promise<CheckView> {
  const res = await api.request(account, 'POST', '/v1/checks/api', { name, request: { method: 'GET', url }, ...extra });
  expect(res.statusCode, res.body).toBe(201);
  return json<CheckView>(res);
}

async function tcpCheck(
  api: TestApi,
  account: TestAccount,
  name: string,
  extra: Record<string, unknown> = {},
): Promise<CheckView> {
  const res = await api.request(account, 'POST', '/v1/checks/tcp', {
    name,
    request: { hostname: 'db.internal', port: 5432 },
    ...extra,
  });
  expect(res.statusCode, res.body).toBe(201);
  return json<CheckView>(res);
}

const names = async (api: TestApi, account: TestAccount, url: string) => {
  const res = await get(api, account, url);
  expect(res.statusCode, res.body).toBe(200);
  return json<CheckView[]>(res).map((c) => c.name);
};

describe('the x-checkly-account header', () => {
  it('is accepted in place of x-service-account, and with it when both name the same account', async ({
    api,
    acme,
  }) => {
    const bearer = { authorization: `Bearer ${acme.apiKey}` };
    const alone = await getWith(api, { ...bearer, 'x-checkly-account': acme.accountId }, '/v1/private-locations');
    expect(alone.statusCode, alone.body).toBe(200);
    expect(json<unknown[]>(alone)).toHaveLength(2);
    const both = await getWith(
      api,
      { ...bearer, 'x-checkly-account': acme.accountId, 'x-service-account': acme.accountId },
      '/v1/private-locations',
    );
    expect(both.statusCode).toBe(200);
  });

  it('is checked like x-service-account: another account or an empty one is a 401', async ({ api, acme, other }) => {
    const bearer = { authorization: `Bearer ${acme.apiKey}` };
    for (const value of [other.accountId, ' ']) {
      const res = await getWith(api, { ...bearer, 'x-checkly-account': value }, '/v1/private-locations');
      expect(res.statusCode).toBe(401);
    }
  });

  it('is a 400 naming both headers when the two name different accounts', async ({ api, acme, other }) => {
    const res = await getWith(
      api,
      {
        authorization: `Bearer ${acme.apiKey}`,
        'x-service-account': acme.accountId,
        'x-checkly-account': other.accountId,
      },
      '/v1/private-locations',
    );
    expect(res.statusCode).toBe(400);
    expect(json(res).message).toContain('x-service-account');
    expect(json(res).message).toContain('x-checkly-account');
  });
});

describe('GET /next/accounts', () => {
  it('answers the caller’s own account by its id, and in the list', async ({ api, acme }) => {
    const res = await get(api, acme, `/next/accounts/${acme.accountId}`);
    expect(res.statusCode).toBe(200);
    expect(json(res)).toEqual({ id: acme.accountId, name: 'Acme', runtimeId: '2026.04' });
    expect(json(await get(api, acme, '/next/accounts'))).toEqual([
      { id: acme.accountId, name: 'Acme', runtimeId: '2026.04' },
    ]);
  });

  it('is a 404 for another account’s id and for an unknown one', async ({ api, acme, other }) => {
    for (const id of [other.accountId, '00000000-0000-4000-8000-000000000000']) {
      const res = await get(api, acme, `/next/accounts/${id}`);
      expect(res.statusCode).toBe(404);
      expect(json(res).error).toBe('Not Found');
    }
  });
});

describe('GET /v1/locations', () => {
  it('lists the account’s own private locations as region and name', async ({ api, acme, other }) => {
    expect(json(await get(api, acme, '/v1/locations'))).toEqual([
      { region: 'office', name: 'Loc office' },
      { region: 'lab', name: 'Loc lab' },
    ]);
    expect(json(await get(api, other, '/v1/locations'))).toEqual([{ region: 'elsewhere', name: 'Loc elsewhere' }]);
  });
});

describe('GET /v1/runtimes', () => {
  const pinnedNode = (id: string) =>
    (
      JSON.parse(readFileSync(`${packageRuntimesDir()}/${id}/package.json`, 'utf8')) as {
        dependencies: Record<string, string>;
      }
    ).dependencies.node;

  it('lists every runtime under runtimes/, newest first, with its Node.js and installed libraries', async ({
    api,
    acme,
  }) => {
    const runtimes = json<Array<Record<string, unknown> & { name: string; dependencies: Record<string, string> }>>(
      await get(api, acme, '/v1/runtimes'),
    );
    expect(runtimes.map((r) => r.name)).toEqual(['2026.04', '2025.04']);
    const [current, older] = runtimes;
    expect(current).toMatchObject({
      name: '2026.04',
      multiStepSupport: true,
      nodeJsVersion: pinnedNode('2026.04'),
      stage: 'CURRENT',
    });
    expect(older).toMatchObject({ name: '2025.04', nodeJsVersion: pinnedNode('2025.04'), stage: 'STABLE' });
    // Exact versions from the lockfile, not package.json's ranges; the pinned node is not a library.
    expect(current?.dependencies.playwright).toMatch(/^1\.58\.\d+$/);
    expect(current?.dependencies).not.toHaveProperty('node');
    expect(current?.description).toContain('Playwright 1.58');
  });

  it('serves a catalog that matches the runtimes/ folders (else: node scripts/runtime-catalog.ts)', async () => {
    expect(
      readRuntimeCatalog(),
      'src/service/runtime-catalog.json is stale: run node scripts/runtime-catalog.ts',
    ).toEqual(await listRuntimes(packageRuntimesDir()));
  });

  it('shows one runtime by id; an unknown one, or one the reference has but this service does not, is a 404', async ({
    api,
    acme,
  }) => {
    const one = await get(api, acme, '/v1/runtimes/2025.04');
    expect(one.statusCode).toBe(200);
    expect(json<{ name: string }>(one).name).toBe('2025.04');
    for (const id of ['2024.09', 'nope']) {
      const res = await get(api, acme, `/v1/runtimes/${id}`);
      expect(res.statusCode).toBe(404);
      expect(json(res).message).toContain(id);
    }
  });
});

describe('GET /v2/checks', () => {
  it.beforeEach(async ({ api, acme, other }) => {
    await apiCheck(api, acme, 'Home page', 'https://www.MyApp.example/', { tags: ['web', 'prod'] });
    await apiCheck(api, acme, 'Billing API', 'https://billing.example/health', { tags: ['prod'] });
    await tcpCheck(api, acme, 'Database', { tags: ['db'] });
    await apiCheck(api, other, 'Other home', 'https://www.myapp.example/', { tags: ['web'] });
  });

  it('lists the account’s checks in creation order with the v1 views, paged', async ({ api, acme, other }) => {
    const v1 = json<CheckView[]>(await get(api, acme, '/v1/checks'));
    const v2 = json<CheckView[]>(await get(api, acme, '/v2/checks'));
    expect(v2).toEqual(v1);
    expect(v2.map((c) => c.name)).toEqual(['Home page', 'Billing API', 'Database']);
    expect(await names(api, acme, '/v2/checks?limit=2&page=2')).toEqual(['Database']);
    expect(await names(api, other, '/v2/checks')).toEqual(['Other home']);
  });

  it('filters by tag (any of them), name, type and API URL, before paging', async ({ api, acme }) => {
    expect(await names(api, acme, '/v2/checks?tag=prod')).toEqual(['Home page', 'Billing API']);
    expect(await names(api, acme, '/v2/checks?tag=db&tag=web')).toEqual(['Home page', 'Database']);
    expect(await names(api, acme, '/v2/checks?tag=prod&limit=1&page=2')).toEqual(['Billing API']);
    expect(await names(api, acme, '/v2/checks?search=BASE')).toEqual(['Database']);
    expect(await names(api, acme, '/v2/checks?search=%25')).toEqual([]);
    expect(await names(api, acme, '/v2/checks?checkType=TCP')).toEqual(['Database']);
    expect(await names(api, acme, '/v2/checks?checkType=URL')).toEqual([]);
    expect(await names(api, acme, '/v2/checks?apiCheckUrlFilterPattern=myapp.example')).toEqual(['Home page']);
    expect(await names(api, acme, '/v2/checks?apiCheckUrlFilterPattern=example&tag=prod&search=bill')).toEqual([
      'Billing API',
    ]);
    // No check has run yet, so none has a status.
    expect(await names(api, acme, '/v2/checks?status=passing')).toEqual([]);
    // v1 takes the same filters, as the reference's v1 does (its CLI filters through /v1/checks).
    expect(await names(api, acme, '/v1/checks?apiCheckUrlFilterPattern=example&tag=prod&search=bill')).toEqual([
      'Billing API',
    ]);
    expect(await names(api, acme, '/v1/checks?tag=db&tag=web&limit=1&page=2')).toEqual(['Database']);
    // Arrays as axios writes them, as the reference's CLI sends --tag.
    expect(await names(api, acme, '/v1/checks?tag[]=db&tag[]=web')).toEqual(['Home page', 'Database']);
    expect(await names(api, acme, '/v2/checks?tag[]=db')).toEqual(['Database']);
  });

  it('answers 400 naming the parameter for bad filters and paging', async ({ api, acme }) => {
    for (const [query, field] of [
      ['status=green', 'querystring/status'],
      ['checkType=FOO', 'querystring/checkType'],
      ['limit=101', 'querystring/limit'],
      ['page=0', 'querystring/page'],
      ['apiCheckUrlFilterPattern=', 'querystring/apiCheckUrlFilterPattern'],
      ['applyGroupSettings=maybe', 'querystring/applyGroupSettings'],
    ]) {
      for (const version of ['v1', 'v2']) {
        const res = await get(api, acme, `/${version}/checks?${query}`);
        expect(res.statusCode, query).toBe(400);
        expect(json(res).message).toContain(field);
      }
    }
  });
});

describe('GET /v2/checks/{id}', () => {
  it('shows the account’s check as v1 does; another account’s is a 404', async ({ api, acme, other }) => {
    const check = await apiCheck(api, acme, 'Home page', 'https://example.test/');
    const v2 = await get(api, acme, `/v2/checks/${check.id}?includeDependencies=true`);
    expect((await get(api, other, `/v1/checks/${check.id}`)).statusCode).toBe(404);
    expect(v2.statusCode).toBe(200);
    expect(json(v2)).toEqual(json(await get(api, acme, `/v1/checks/${check.id}`)));
    const res = await get(api, other, `/v2/checks/${check.id}`);
    expect(res.statusCode).toBe(404);
    expect(json(res).message).toMatch(/not found/i);
  });

  it('applies the group’s settings when asked: locations, activation, runtime, variables and API defaults', async ({
    api,
    acme,
  }) => {
    const groupRes = await api.request(acme, 'POST', '/v2/check-groups', {
      name: 'Backend',
      activated: false,
      privateLocations: ['lab'],
      runtimeId: '2025.04',
      environmentVariables: [{ key: 'REGION', value: 'eu' }],
      apiCheckDefaults: {
        url: 'https://api.example',
        headers: [{ key: 'X-Team', value: 'backend' }],
        queryParameters: [],
        assertions: [],
        basicAuth: null,
      },
    });
    expect(groupRes.statusCode, groupRes.body).toBe(201);
    const groupId = json<{ id: number }>(groupRes).id;
    const check = await apiCheck(api, acme, 'Member', '/health', { groupId, privateLocations: ['office'] });

    const plain = json<CheckView>(await get(api, acme, `/v2/checks/${check.id}`));
    expect(plain).toMatchObject({
      activated: true,
      privateLocations: ['office'],
      runtimeId: null,
      request: { url: '/health' },
    });
    const applied = json<CheckView>(await get(api, acme, `/v2/checks/${check.id}?applyGroupSettings=true`));
    expect(applied).toMatchObject({
      activated: false,
      privateLocations: ['lab'],
      runtimeId: '2025.04',
      environmentVariables: [expect.objectContaining({ key: 'REGION', value: 'eu' })],
      request: { url: 'https://api.example/health', headers: [{ key: 'X-Team', value: 'backend' }] },
    });
    expect(json<CheckView[]>(await get(api, acme, '/v2/checks?applyGroupSettings=true'))).toEqual([applied]);
    expect(json<CheckView>(await get(api, acme, `/v1/checks/${check.id}?applyGroupSettings=true`))).toEqual(applied);
  });
});

/** The filters' SQL on both backends, including the current-status filter the API test cannot reach without runs. */
describe.each(storeBackends())('check list filters on $name', (backend) => {
  const t = freshAccountEachTest(backend);

  const addCheck = (name: string, checkType: 'API' | 'TCP', body: Record<string, unknown>) =>
    t.store.checks.create({
      accountId: t.accountId,
      checkType,
      name,
      activated: true,
      muted: false,
      frequency: 10,
      frequencyOffset: null,
      locationIds: [],
      body: { name, ...body },
    });

  const setStatus = (checkId: string, failures: number, degraded: number) =>
    t.fresh.query(
      `INSERT INTO check_statuses (check_id, account_id, has_failures, has_errors, is_degraded, alert_state, created_at)
       VALUES (?, ?, ?, 0, ?, 'NO_ALERT', '2026-01-01T00:00:00.000Z')`,
      [checkId, t.accountId, failures, degraded],
    );

  it('combines tag, search, URL and status filters, then pages', async () => {
    const home = await addCheck('Home 50%_off', 'API', {
      tags: ['web', 'prod'],
      request: { url: 'https://Shop.example/' },
    });
    const billing = await addCheck('Billing', 'API', { tags: ['prod'], request: { url: 'https://billing.example/' } });
    const db = await addCheck('Database', 'TCP', { tags: ['db'], request: { hostname: 'shop.example', port: 1 } });
    await addCheck('Untagged', 'API', { request: { url: 'https://x.example/' } });
    await setStatus(home.id, 0, 0);
    await setStatus(billing.id, 1, 0);
    await setStatus(db.id, 0, 1);
    const list = async (filter: Parameters<typeof t.store.checks.list>[1]) =>
      (await t.store.checks.list(t.accountId, filter)).map((c) => c.name);
    const page = { limit: 10, page: 1 };

    expect(await list({ ...page, tags: ['prod', 'db'] })).toEqual(['Home 50%_off', 'Billing', 'Database']);
    expect(await list({ ...page, search: '50%_' })).toEqual(['Home 50%_off']);
    expect(await list({ ...page, search: '_' })).toEqual(['Home 50%_off']);
    expect(await list({ ...page, urlContains: 'shop.EXAMPLE' })).toEqual(['Home 50%_off']);
    expect(await list({ ...page, status: 'passing' })).toEqual(['Home 50%_off']);
    expect(await list({ ...page, status: 'failing' })).toEqual(['Billing']);
    expect(await list({ ...page, status: 'degraded' })).toEqual(['Database']);
    expect(await list({ ...page, checkType: 'API', tags: ['prod'], limit: 1, page: 2 })).toEqual(['Billing']);
  });
});
