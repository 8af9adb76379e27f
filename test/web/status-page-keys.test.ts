/**
 * Reader keys of private status pages through the public API, and the page properties the public
 * pages render (description, isPrivate, whiteLabel): raw key once, masked afterwards, revocation,
 * 400s naming the field, and another account's page a 404.
 */
import { describe, expect } from 'vitest';
import { json, type TestAccount, type TestApi } from '../helpers/public-api.ts';
import { apiTest as it } from '../support/api-test.ts';

interface KeyView {
  id: string;
  maskedKey: string;
  rawKey?: string;
  created_at: string;
  updated_at: string | null;
}

async function makePage(api: TestApi, acme: TestAccount, body: Record<string, unknown> = {}) {
  const res = await api.request(acme, 'POST', '/v1/status-pages', {
    name: 'Internal',
    url: `internal-${Math.random().toString(36).slice(2)}`,
    cards: [],
    ...body,
  });
  expect(res.statusCode, res.body).toBe(201);
  return json<{ id: string; isPrivate: boolean; whiteLabel: boolean; description: string | null }>(res);
}

describe('status page keys', () => {
  it('returns a new key raw once, then lists it masked, and revokes it', async ({ api, acme }) => {
    const page = await makePage(api, acme, { isPrivate: true });
    const created = await api.request(acme, 'POST', `/v1/status-pages/${page.id}/keys`);
    expect(created.statusCode).toBe(201);
    const key = json<KeyView>(created);
    expect(key.rawKey).toMatch(/^sp_[A-Za-z0-9_-]{43}$/);
    expect(key.maskedKey).toBe(`sp_…${key.rawKey?.slice(-4)}`);

    const listed = json<KeyView[]>(await api.request(acme, 'GET', `/v1/status-pages/${page.id}/keys`));
    expect(listed).toEqual([{ id: key.id, maskedKey: key.maskedKey, created_at: key.created_at, updated_at: null }]);
    expect(JSON.stringify(listed)).not.toContain(key.rawKey);
    // The status page list shows the keys too, masked.
    const pages = json<{ entries: { id: string; keys: KeyView[] }[] }>(
      await api.request(acme, 'GET', '/v1/status-pages?limit=100'),
    );
    expect(pages.entries.find((p) => p.id === page.id)?.keys).toEqual(listed);

    expect((await api.request(acme, 'DELETE', `/v1/status-pages/${page.id}/keys/${key.id}`)).statusCode).toBe(204);
    expect(json<KeyView[]>(await api.request(acme, 'GET', `/v1/status-pages/${page.id}/keys`))).toEqual([]);
    expect((await api.request(acme, 'DELETE', `/v1/status-pages/${page.id}/keys/${key.id}`)).statusCode).toBe(404);
  });

  it("answers 404 for another account's page and its keys", async ({ api, acme, other }) => {
    const page = await makePage(api, acme);
    const key = json<KeyView>(await api.request(acme, 'POST', `/v1/status-pages/${page.id}/keys`));
    expect((await api.request(other, 'POST', `/v1/status-pages/${page.id}/keys`)).statusCode).toBe(404);
    expect((await api.request(other, 'GET', `/v1/status-pages/${page.id}/keys`)).statusCode).toBe(404);
    expect((await api.request(other, 'DELETE', `/v1/status-pages/${page.id}/keys/${key.id}`)).statusCode).toBe(404);
    expect(json<KeyView[]>(await api.request(acme, 'GET', `/v1/status-pages/${page.id}/keys`))).toHaveLength(1);
  });

  it('answers 400 naming the field for a malformed key id, description, isPrivate or whiteLabel', async ({
    api,
    acme,
  }) => {
    const page = await makePage(api, acme);
    const badKey = await api.request(acme, 'DELETE', `/v1/status-pages/${page.id}/keys/not-a-uuid`);
    expect(badKey.statusCode).toBe(400);
    expect(json(badKey).message).toContain('keyId');
    for (const [field, value] of [
      ['description', 'x'.repeat(501)],
      ['isPrivate', 'yes'],
      ['whiteLabel', 3],
    ] as const) {
      const res = await api.request(acme, 'POST', '/v1/status-pages', {
        name: 'Bad',
        url: `bad-${field.toLowerCase()}`,
        cards: [],
        [field]: value,
      });
      expect(res.statusCode, field).toBe(400);
      expect(json(res).message).toContain(`body/${field}`);
    }
  });

  it('stores description, isPrivate and whiteLabel, which default to null, false and false', async ({ api, acme }) => {
    const plain = await makePage(api, acme);
    expect(plain).toMatchObject({ description: null, isPrivate: false, whiteLabel: false });
    const set = await makePage(api, acme, { description: 'Our internal services', isPrivate: true, whiteLabel: true });
    expect(set).toMatchObject({ description: 'Our internal services', isPrivate: true, whiteLabel: true });
    const read = json<typeof set>(await api.request(acme, 'GET', `/v1/status-pages/${set.id}`));
    expect(read).toMatchObject({ description: 'Our internal services', isPrivate: true, whiteLabel: true });
  });
});
