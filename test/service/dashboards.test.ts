import { describe, expect } from 'vitest';
import { json, type TestAccount, type TestApi } from '../helpers/public-api.ts';
import { apiTest as it } from '../support/api-test.ts';

interface DashboardView {
  id: number;
  dashboardId: string;
  header: string;
  customUrl: string | null;
  customDomain: string | null;
  isPrivate: boolean;
  keys: Array<Record<string, unknown>>;
  [key: string]: unknown;
}

const create = (api: TestApi, account: TestAccount, payload: Record<string, unknown>) =>
  api.app.inject({ method: 'POST', url: '/v1/dashboards', headers: account.headers, payload });

describe('dashboards', () => {
  it('creates a dashboard with every reference default and returns id, dashboardId and created_at', async ({
    api,
    acme,
  }) => {
    const res = await create(api, acme, { header: 'Acme status' });
    expect(res.statusCode, res.body).toBe(201);
    const d = json<DashboardView>(res);
    expect(d).toEqual({
      id: expect.any(Number),
      dashboardId: String(d.id),
      header: 'Acme status',
      customUrl: null,
      customDomain: null,
      logo: null,
      favicon: null,
      link: null,
      description: null,
      width: 'FULL',
      refreshRate: 60,
      paginate: true,
      paginationRate: 60,
      sortByStatus: false,
      checksPerPage: 15,
      useTagsAndOperator: false,
      hideTags: false,
      enableIncidents: false,
      expandChecks: false,
      tags: [],
      showHeader: true,
      showCheckRunLinks: false,
      showGroupNames: true,
      customCSS: '',
      isPrivate: false,
      showP95: true,
      showP99: true,
      keys: [],
      created_at: expect.stringMatching(/^\d{4}-\d{2}-\d{2}T/),
      updated_at: null,
    });
  });

  it('stores every property as given and reads it back', async ({ api, acme }) => {
    const body = {
      header: 'Ops',
      description: 'Everything we run',
      customUrl: 'acme-ops',
      customDomain: 'status.acme.example',
      logo: 'https://acme.example/logo.svg',
      favicon: '',
      link: 'https://acme.example/',
      width: '960PX',
      refreshRate: 600,
      paginate: false,
      paginationRate: 300,
      sortByStatus: true,
      checksPerPage: 20,
      useTagsAndOperator: true,
      hideTags: true,
      enableIncidents: true,
      expandChecks: true,
      tags: ['prod', 'eu'],
      showHeader: false,
      showCheckRunLinks: true,
      showGroupNames: false,
      customCSS: 'body { color: red }',
      isPrivate: false,
      showP95: false,
      showP99: false,
    };
    const created = json<DashboardView>(await create(api, acme, body));
    const got = await api.app.inject({
      method: 'GET',
      url: `/v1/dashboards/${created.dashboardId}`,
      headers: acme.headers,
    });
    expect(got.statusCode).toBe(200);
    expect(json<DashboardView>(got)).toMatchObject(body);
  });

  it('refuses values outside the enums and ranges, naming the field and what is allowed', async ({ api, acme }) => {
    const cases: Array<[Record<string, unknown>, RegExp]> = [
      [{ width: '800PX' }, /body\/width must be one of FULL, 960PX/],
      [{ refreshRate: 120 }, /body\/refreshRate must be one of 60, 300, 600/],
      [{ paginationRate: 10 }, /body\/paginationRate must be one of 30, 60, 300/],
      [{ checksPerPage: 21 }, /body\/checksPerPage must be <= 20/],
      [{ checksPerPage: 0 }, /body\/checksPerPage must be >= 1/],
      [{ logo: 'not a url' }, /body\/logo/],
      [{ customUrl: 'has space' }, /body\/customUrl/],
      [{ customDomain: 'nodots' }, /body\/customDomain must be a domain name/],
    ];
    for (const [extra, message] of cases) {
      const res = await create(api, acme, { header: 'x', ...extra });
      expect(res.statusCode, JSON.stringify(extra)).toBe(400);
      expect(json(res).message).toMatch(message);
    }
    const noHeader = await create(api, acme, {});
    expect(json(noHeader).message).toMatch(/header is required/);
  });

  it('refuses a customUrl or customDomain already used by any account, in any letter case (409)', async ({
    api,
    acme,
    other,
  }) => {
    expect(
      (await create(api, acme, { header: 'a', customUrl: 'Acme', customDomain: 'https://Status.Acme.example/' }))
        .statusCode,
    ).toBe(201);
    const url = await create(api, other, { header: 'b', customUrl: 'aCME' });
    expect(url.statusCode).toBe(409);
    expect(json(url)).toEqual({
      statusCode: 409,
      error: 'Conflict',
      message: 'body/customUrl is already in use by another dashboard',
    });
    const domain = await create(api, other, { header: 'b', customDomain: 'status.acme.EXAMPLE' });
    expect(domain.statusCode).toBe(409);
    expect(json(domain).message).toMatch(/customDomain is already in use/);
    // Several dashboards without a custom URL or domain never collide.
    expect((await create(api, other, { header: 'c', customUrl: null })).statusCode).toBe(201);
    expect((await create(api, other, { header: 'd', customUrl: '' })).statusCode).toBe(201);
  });

  it('lets exactly one of many racing creates take a customUrl', async ({ api, acme, other }) => {
    const results = await Promise.all(
      Array.from({ length: 12 }, (_, i) =>
        create(api, i % 2 === 0 ? acme : other, { header: `race ${i}`, customUrl: i % 3 === 0 ? 'RACE' : 'race' }),
      ),
    );
    const codes = results.map((r) => r.statusCode).sort();
    expect(codes.filter((c) => c === 201)).toHaveLength(1);
    expect(codes.filter((c) => c === 409)).toHaveLength(11);
  });

  it('PUT changes what it carries, keeps its own address, and 409s on another dashboard’s', async ({
    api,
    acme,
    other,
  }) => {
    const a = json<DashboardView>(await create(api, acme, { header: 'a', customUrl: 'alpha' }));
    await create(api, other, { header: 'b', customUrl: 'beta' });
    const put = (payload: object) =>
      api.app.inject({ method: 'PUT', url: `/v1/dashboards/${a.dashboardId}`, headers: acme.headers, payload });
    const same = await put({ customUrl: 'ALPHA', refreshRate: 300 });
    expect(same.statusCode, same.body).toBe(200);
    expect(json<DashboardView>(same)).toMatchObject({
      header: 'a',
      customUrl: 'ALPHA',
      refreshRate: 300,
      updated_at: expect.any(String),
    });
    expect((await put({ customUrl: 'Beta' })).statusCode).toBe(409);
    // Freed addresses can be taken by others.
    expect((await put({ customUrl: null })).statusCode).toBe(200);
    expect((await create(api, other, { header: 'c', customUrl: 'alpha' })).statusCode).toBe(201);
  });

  it('reads a dashboard by id, customUrl or customDomain, and lists the account’s own, paged', async ({
    api,
    acme,
    other,
  }) => {
    const a = json<DashboardView>(
      await create(api, acme, { header: 'a', customUrl: 'alpha', customDomain: 'status.alpha.example' }),
    );
    await create(api, acme, { header: 'b' });
    await create(api, other, { header: 'theirs' });
    for (const url of [
      '/v1/dashboards/ALPHA?type=customUrl',
      '/v1/dashboards/status.alpha.example?type=customDomain',
      `/v1/dashboards/${a.id}`,
    ]) {
      const res = await api.app.inject({ method: 'GET', url, headers: acme.headers });
      expect(res.statusCode, url).toBe(200);
      expect(json<DashboardView>(res).id).toBe(a.id);
    }
    const list = await api.app.inject({ method: 'GET', url: '/v1/dashboards', headers: acme.headers });
    expect(json<DashboardView[]>(list).map((d) => d.header)).toEqual(['a', 'b']);
    const page2 = await api.app.inject({ method: 'GET', url: '/v1/dashboards?limit=1&page=2', headers: acme.headers });
    expect(json<DashboardView[]>(page2).map((d) => d.header)).toEqual(['b']);
  });

  it('gives a private dashboard a key, raw once in the answer that made it, masked after, and drops it when made public', async ({
    api,
    acme,
  }) => {
    const d = json<DashboardView>(
      await create(api, acme, { header: 'p', isPrivate: true, keys: [{ rawKey: 'ignored' }] }),
    );
    expect(d.keys).toHaveLength(1);
    expect(Object.keys(d.keys[0] ?? {}).sort()).toEqual(['created_at', 'id', 'maskedKey', 'rawKey', 'updated_at']);
    const raw = (d.keys[0] as { rawKey?: string }).rawKey ?? '';
    expect(raw).toMatch(/^da_[0-9a-f]{32}$/);
    expect(d.keys[0]?.maskedKey).toBe(`da_…${raw.slice(-4)}`);
    const again = json<DashboardView>(
      await api.app.inject({ method: 'GET', url: `/v1/dashboards/${d.id}`, headers: acme.headers }),
    );
    expect(Object.keys(again.keys[0] ?? {}).sort()).toEqual(['created_at', 'id', 'maskedKey', 'updated_at']);
    const pub = await api.app.inject({
      method: 'PUT',
      url: `/v1/dashboards/${d.id}`,
      headers: acme.headers,
      payload: { isPrivate: false },
    });
    expect(json<DashboardView>(pub).keys).toEqual([]);
    // Made private again: a new key, raw in that PUT's answer only.
    const priv = json<DashboardView>(
      await api.app.inject({
        method: 'PUT',
        url: `/v1/dashboards/${d.id}`,
        headers: acme.headers,
        payload: { isPrivate: true },
      }),
    );
    expect((priv.keys[0] as { rawKey?: string }).rawKey).toMatch(/^da_[0-9a-f]{32}$/);
    expect((priv.keys[0] as { rawKey?: string }).rawKey).not.toBe(raw);
  });

  it('is 404 for another account’s dashboard or an unknown id, and 401 without a key', async ({ api, acme, other }) => {
    const d = json<DashboardView>(await create(api, acme, { header: 'a' }));
    for (const [method, url] of [
      ['GET', `/v1/dashboards/${d.id}`],
      ['PUT', `/v1/dashboards/${d.id}`],
      ['DELETE', `/v1/dashboards/${d.id}`],
      ['GET', '/v1/dashboards/999999'],
      ['GET', '/v1/dashboards/not-a-number'],
    ] as const) {
      const res = await api.app.inject({
        method,
        url,
        headers: other.headers,
        ...(method === 'PUT' ? { payload: { header: 'x' } } : {}),
      });
      expect(res.statusCode, `${method} ${url}`).toBe(404);
      expect(json(res)).toEqual({ statusCode: 404, error: 'Not Found', message: 'Dashboard not found' });
    }
    expect((await api.app.inject({ method: 'GET', url: '/v1/dashboards' })).statusCode).toBe(401);
    const del = await api.app.inject({ method: 'DELETE', url: `/v1/dashboards/${d.id}`, headers: acme.headers });
    expect(del.statusCode).toBe(204);
    expect(
      (await api.app.inject({ method: 'GET', url: `/v1/dashboards/${d.id}`, headers: acme.headers })).statusCode,
    ).toBe(404);
  });
});
