/**
 * Status pages, status page services and subscriptions through the public API (app.inject on a
 * real SQLite store): shapes, validation, paging, 409s on taken urls and cross-account 404s.
 */
import { describe, expect } from 'vitest';
import { first, json, type TestAccount, type TestApi } from '../helpers/public-api.ts';
import { apiTest as it } from '../support/api-test.ts';
import { expectBadRequestNaming } from '../support/bad-request.ts';
import { createService, expectLimitsRefused, type Paged, type ServiceView } from '../support/web-status-page-api.ts';

interface CardView {
  id: string;
  name: string;
  services: ServiceView[];
  created_at: string;
  updated_at: string | null;
}
interface PageView {
  id: string;
  name: string;
  url: string;
  customDomain: string | null;
  defaultTheme: string;
  cards: CardView[];
  whiteLabel?: boolean;
  isPrivate: boolean;
  accountId?: string;
  incidents?: { id: string; lastUpdateStatus: string }[];
  keys?: unknown[];
}

async function createPage(api: TestApi, account: TestAccount, body: Record<string, unknown>) {
  return api.request(account, 'POST', '/v1/status-pages', body);
}

describe('status page services', () => {
  it('creates, reads, lists, renames and deletes a service', async ({ api, acme }) => {
    const api1 = await createService(api, acme, 'API');
    expect(api1).toMatchObject({ name: 'API', accountId: acme.accountId, updated_at: null });
    const got = await api.request(acme, 'GET', `/v1/status-pages/services/${api1.id}`);
    expect(json<ServiceView>(got)).toEqual(api1);

    const put = await api.request(acme, 'PUT', `/v1/status-pages/services/${api1.id}`, { name: 'Public API' });
    expect(put.statusCode).toBe(200);
    expect(json<ServiceView>(put)).toMatchObject({ name: 'Public API' });
    expect(json<ServiceView>(put).updated_at).not.toBeNull();

    const del = await api.request(acme, 'DELETE', `/v1/status-pages/services/${api1.id}`);
    expect(del.statusCode).toBe(204);
    const gone = await api.request(acme, 'GET', `/v1/status-pages/services/${api1.id}`);
    expect(gone.statusCode).toBe(404);
  });

  it('pages the list with nextId and lists everything with paginated=false', async ({ api, acme }) => {
    for (const name of ['a', 'b', 'c']) await createService(api, acme, name);
    const p1 = json<Paged<ServiceView>>(await api.request(acme, 'GET', '/v1/status-pages/services?limit=2'));
    expect(p1.entries.map((s) => s.name)).toEqual(['a', 'b']);
    expect(p1.nextId).toEqual(expect.any(String));
    const p2 = json<Paged<ServiceView>>(
      await api.request(acme, 'GET', `/v1/status-pages/services?limit=2&nextId=${p1.nextId}`),
    );
    expect(p2).toMatchObject({ length: 1, nextId: null });
    const all = json<Paged<ServiceView>>(
      await api.request(acme, 'GET', '/v1/status-pages/services?limit=1&paginated=false'),
    );
    expect(all.length).toBe(3);
  });

  it("answers 404 for another account's service and 400 without a name", async ({ api, acme, other }) => {
    const mine = await createService(api, acme, 'API');
    for (const method of ['GET', 'DELETE'] as const) {
      const res = await api.app.inject({ method, url: `/v1/status-pages/services/${mine.id}`, headers: other.headers });
      expect(res.statusCode).toBe(404);
    }
    const bad = await api.request(acme, 'POST', '/v1/status-pages/services', {});
    expectBadRequestNaming(bad, 'name');
  });
});

describe('status pages', () => {
  it('creates a page with cards of services and returns the reference shape', async ({ api, acme }) => {
    const svc = await createService(api, acme, 'API');
    const res = await createPage(api, acme, {
      name: 'Acme status',
      url: 'Acme-Status',
      cards: [{ name: 'Core', services: [{ id: svc.id }] }],
    });
    expect(res.statusCode).toBe(201);
    const page = json<PageView>(res);
    expect(page).toMatchObject({
      name: 'Acme status',
      url: 'acme-status', // lower-cased, as the reference's x-convert says
      customDomain: null,
      themeColors: null,
      defaultTheme: 'AUTO',
      whiteLabel: false,
      isPrivate: false,
    });
    expect(first(page.cards)).toMatchObject({ name: 'Core', services: [{ id: svc.id, name: 'API' }] });

    const got = json<PageView>(await api.request(acme, 'GET', `/v1/status-pages/${page.id}`));
    expect(got).toEqual(page);
  });

  it('replaces cards on PUT, keeping the id of a card sent back with its id', async ({ api, acme }) => {
    const a = await createService(api, acme, 'A');
    const b = await createService(api, acme, 'B');
    const page = json<PageView>(
      await createPage(api, acme, {
        name: 'P',
        url: 'p',
        cards: [{ name: 'One', services: [{ id: a.id }] }, { name: 'Two' }],
      }),
    );
    const one = first(page.cards);
    const res = await api.request(acme, 'PUT', `/v1/status-pages/${page.id}`, {
      name: 'P2',
      url: 'p',
      cards: [{ id: one.id, name: 'One renamed', services: [{ id: b.id }, { id: a.id }] }],
    });
    expect(res.statusCode).toBe(200);
    const updated = json<PageView>(res);
    expect(updated.name).toBe('P2');
    expect(updated.cards).toHaveLength(1);
    expect(first(updated.cards)).toMatchObject({ id: one.id, name: 'One renamed', created_at: one.created_at });
    expect(first(updated.cards).services.map((s) => s.name)).toEqual(['B', 'A']);
  });

  it("refuses another account's service on a card with 400 naming it", async ({ api, acme, other }) => {
    const theirs = await createService(api, other, 'Theirs');
    const res = await createPage(api, acme, {
      name: 'P',
      url: 'p',
      cards: [{ name: 'C', services: [{ id: theirs.id }] }],
    });
    expectBadRequestNaming(res, theirs.id);
    expect(json(res).message).toContain('body/cards/0/services');
  });

  it('answers 409 for a url or custom domain in use by any account, in any letter case', async ({
    api,
    acme,
    other,
  }) => {
    expect(
      (await createPage(api, acme, { name: 'P', url: 'taken', customDomain: 'status.acme.com', cards: [] })).statusCode,
    ).toBe(201);
    const url = await createPage(api, other, { name: 'Q', url: 'TAKEN', cards: [] });
    expect(url.statusCode).toBe(409);
    expect(json(url).message).toContain('url');
    const domain = await createPage(api, other, { name: 'Q', url: 'free', customDomain: 'Status.Acme.com', cards: [] });
    expect(domain.statusCode).toBe(409);
    expect(json(domain).message).toContain('customDomain');
  });

  it('validates the body: required url and cards, theme enum, colour pattern', async ({ api, acme }) => {
    const cases: [Record<string, unknown>, string][] = [
      [{ name: 'P', cards: [] }, 'url'],
      [{ name: 'P', url: 'p' }, 'cards'],
      [{ name: 'P', url: 'p', cards: [], defaultTheme: 'PINK' }, 'LIGHT, DARK, AUTO'],
      [{ name: 'P', url: 'p', cards: [], themeColors: { light: {}, dark: {} } }, 'themeColors/light'],
    ];
    for (const [body, mention] of cases) {
      const res = await createPage(api, acme, body);
      expectBadRequestNaming(res, mention, JSON.stringify(body));
    }
  });

  it('lists pages with limit bounds and nextId paging to null, with accountId, incidents and keys', async ({
    api,
    acme,
    other,
  }) => {
    for (const n of [1, 2, 3]) await createPage(api, acme, { name: `P${n}`, url: `p${n}`, cards: [] });
    await createPage(api, other, { name: 'Theirs', url: 'theirs', cards: [] });
    const p1 = json<Paged<PageView>>(await api.request(acme, 'GET', '/v1/status-pages?limit=2'));
    expect(p1.entries.map((p) => p.name)).toEqual(['P1', 'P2']);
    expect(first(p1.entries)).toMatchObject({ accountId: acme.accountId, incidents: [], keys: [] });
    const p2 = json<Paged<PageView>>(await api.request(acme, 'GET', `/v1/status-pages?limit=2&nextId=${p1.nextId}`));
    expect(p2).toMatchObject({ length: 1, nextId: null });
    await expectLimitsRefused(api, acme, '/v1/status-pages', [0, 101]);
    const bad = await api.request(acme, 'GET', '/v1/status-pages?nextId=bogus');
    expectBadRequestNaming(bad, 'nextId');
  });

  it("answers 404 for another account's page on every operation, and 401 without a key", async ({
    api,
    acme,
    other,
  }) => {
    const page = json<PageView>(await createPage(api, acme, { name: 'P', url: 'p', cards: [] }));
    const body = { name: 'X', url: 'x', cards: [] };
    for (const [method, payload] of [['GET'], ['PUT', body], ['DELETE']] as const) {
      const res = await api.app.inject({ method, url: `/v1/status-pages/${page.id}`, headers: other.headers, payload });
      expect(res.statusCode, method).toBe(404);
    }
    const sub = await api.request(other, 'GET', `/v1/status-pages/${page.id}/subscriptions`);
    expect(sub.statusCode).toBe(404);
    expect((await api.app.inject({ method: 'GET', url: '/v1/status-pages' })).statusCode).toBe(401);
    const del = await api.request(acme, 'DELETE', `/v1/status-pages/${page.id}`);
    expect(del.statusCode).toBe(204);
  });
});

describe('subscriptions', () => {
  it('bulk-creates email and webhook subscriptions, skips duplicates, lists and deletes them', async ({
    api,
    acme,
    other,
  }) => {
    const page = json<PageView>(await createPage(api, acme, { name: 'P', url: 'p', cards: [] }));
    const base = `/v1/status-pages/${page.id}/subscriptions`;
    const bulk = await api.request(acme, 'POST', `${base}/bulk`, {
      subscriptions: [
        { type: 'EMAIL', config: 'ops@example.com' },
        { type: 'EMAIL', config: 'OPS@example.com' },
        {
          type: 'WEBHOOK',
          config: JSON.stringify({ url: 'http://127.0.0.1:9/hook', secret: 'a-secret-of-16+chars' }),
        },
      ],
    });
    expect(bulk.statusCode).toBe(201);
    expect(json(bulk)).toEqual({ created: 2, skipped: 1, status: 'PENDING' });

    const list = await api.request(acme, 'GET', base);
    const subs =
      json<{ id: string; type: string; address: string; status: string; created_at: string; updated_at: string }[]>(
        list,
      );
    expect(subs.map((s) => [s.type, s.address, s.status])).toEqual([
      ['EMAIL', 'ops@example.com', 'PENDING'],
      ['WEBHOOK', 'http://127.0.0.1:9/hook', 'PENDING'],
    ]);
    // The webhook secret is never returned.
    expect(list.body).not.toContain('a-secret');

    const other404 = await api.request(other, 'DELETE', `${base}/${first(subs).id}`);
    expect(other404.statusCode).toBe(404);
    const del = await api.request(acme, 'DELETE', `${base}/${first(subs).id}`);
    expect(del.statusCode).toBe(204);
    expect(json<unknown[]>(await api.request(acme, 'GET', base))).toHaveLength(1);
  });

  it('validates subscriptions: count, type, email address and webhook config', async ({ api, acme }) => {
    const page = json<PageView>(await createPage(api, acme, { name: 'P', url: 'p', cards: [] }));
    const url = `/v1/status-pages/${page.id}/subscriptions/bulk`;
    const cases: [unknown, string][] = [
      [[], 'subscriptions'],
      [[{ type: 'SMS', config: 'x' }], 'EMAIL, WEBHOOK'],
      [[{ type: 'EMAIL', config: 'not-an-address' }], 'body/subscriptions/0/config'],
      [[{ type: 'WEBHOOK', config: 'http://example.com' }], 'secret'],
      [[{ type: 'WEBHOOK', config: JSON.stringify({ url: 'ftp://x', secret: 'a-secret-of-16+chars' }) }], 'url'],
      [Array.from({ length: 101 }, (_, i) => ({ type: 'EMAIL', config: `u${i}@example.com` })), 'subscriptions'],
    ];
    for (const [subscriptions, mention] of cases) {
      const res = await api.request(acme, 'POST', url, { subscriptions });
      expectBadRequestNaming(res, mention, mention);
    }
  });
});
