/**
 * Reader keys of private status pages through the public API, and the page properties the public
 * pages render (description, isPrivate, whiteLabel): raw key once, masked afterwards, revocation,
 * 400s naming the field, and another account's page a 404.
 */
import { describe, expect, it } from 'vitest';
import { apiPerTest, json } from '../helpers/public-api.ts';

interface KeyView {
  id: string;
  maskedKey: string;
  rawKey?: string;
  created_at: string;
  updated_at: string | null;
}

describe('status page keys', () => {
  const t = apiPerTest(['acme', 'other'] as const);

  async function makePage(body: Record<string, unknown> = {}) {
    const res = await t.api.app.inject({
      method: 'POST',
      url: '/v1/status-pages',
      headers: t.acme.headers,
      payload: { name: 'Internal', url: `internal-${Math.random().toString(36).slice(2)}`, cards: [], ...body },
    });
    expect(res.statusCode, res.body).toBe(201);
    return json<{ id: string; isPrivate: boolean; whiteLabel: boolean; description: string | null }>(res);
  }

  const call = (method: 'GET' | 'POST' | 'DELETE', url: string, account = t.acme) =>
    t.api.app.inject({ method, url, headers: account.headers });

  it('returns a new key raw once, then lists it masked, and revokes it', async () => {
    const page = await makePage({ isPrivate: true });
    const created = await call('POST', `/v1/status-pages/${page.id}/keys`);
    expect(created.statusCode).toBe(201);
    const key = json<KeyView>(created);
    expect(key.rawKey).toMatch(/^sp_[A-Za-z0-9_-]{43}$/);
    expect(key.maskedKey).toBe(`sp_…${key.rawKey?.slice(-4)}`);

    const listed = json<KeyView[]>(await call('GET', `/v1/status-pages/${page.id}/keys`));
    expect(listed).toEqual([{ id: key.id, maskedKey: key.maskedKey, created_at: key.created_at, updated_at: null }]);
    expect(JSON.stringify(listed)).not.toContain(key.rawKey);
    // The status page list shows the keys too, masked.
    const pages = json<{ entries: { id: string; keys: KeyView[] }[] }>(await call('GET', '/v1/status-pages?limit=100'));
    expect(pages.entries.find((p) => p.id === page.id)?.keys).toEqual(listed);

    expect((await call('DELETE', `/v1/status-pages/${page.id}/keys/${key.id}`)).statusCode).toBe(204);
    expect(json<KeyView[]>(await call('GET', `/v1/status-pages/${page.id}/keys`))).toEqual([]);
    expect((await call('DELETE', `/v1/status-pages/${page.id}/keys/${key.id}`)).statusCode).toBe(404);
  });

  it("answers 404 for another account's page and its keys", async () => {
    const page = await makePage();
    const key = json<KeyView>(await call('POST', `/v1/status-pages/${page.id}/keys`));
    expect((await call('POST', `/v1/status-pages/${page.id}/keys`, t.other)).statusCode).toBe(404);
    expect((await call('GET', `/v1/status-pages/${page.id}/keys`, t.other)).statusCode).toBe(404);
    expect((await call('DELETE', `/v1/status-pages/${page.id}/keys/${key.id}`, t.other)).statusCode).toBe(404);
    expect(json<KeyView[]>(await call('GET', `/v1/status-pages/${page.id}/keys`))).toHaveLength(1);
  });

  it('answers 400 naming the field for a malformed key id, description, isPrivate or whiteLabel', async () => {
    const page = await makePage();
    const badKey = await call('DELETE', `/v1/status-pages/${page.id}/keys/not-a-uuid`);
    expect(badKey.statusCode).toBe(400);
    expect(json(badKey).message).toContain('keyId');
    for (const [field, value] of [
      ['description', 'x'.repeat(501)],
      ['isPrivate', 'yes'],
      ['whiteLabel', 3],
    ] as const) {
      const res = await t.api.app.inject({
        method: 'POST',
        url: '/v1/status-pages',
        headers: t.acme.headers,
        payload: { name: 'Bad', url: `bad-${field.toLowerCase()}`, cards: [], [field]: value },
      });
      expect(res.statusCode, field).toBe(400);
      expect(json(res).message).toContain(`body/${field}`);
    }
  });

  it('stores description, isPrivate and whiteLabel, which default to null, false and false', async () => {
    const plain = await makePage();
    expect(plain).toMatchObject({ description: null, isPrivate: false, whiteLabel: false });
    const set = await makePage({ description: 'Our internal services', isPrivate: true, whiteLabel: true });
    expect(set).toMatchObject({ description: 'Our internal services', isPrivate: true, whiteLabel: true });
    const read = json<typeof set>(await call('GET', `/v1/status-pages/${set.id}`));
    expect(read).toMatchObject({ description: 'Our internal services', isPrivate: true, whiteLabel: true });
  });
});
