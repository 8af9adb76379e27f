import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  first,
  json,
  type KeyView,
  type LocationView,
  startTestApi,
  type TestAccount,
  type TestApi,
} from '../helpers/public-api.ts';

let api: TestApi;
let acme: TestAccount;
beforeEach(async () => {
  api = await startTestApi();
  acme = await api.newAccount('Acme');
});
afterEach(async () => {
  await api.close();
});

async function createLocation(account: TestAccount, slugName = 'office') {
  const res = await api.request(account, 'POST', '/v1/private-locations', { name: 'Office', slugName });
  expect(res.statusCode).toBe(201);
  return json<LocationView>(res);
}

/** The raw key of a key from a creation response (where it is always present). */
function raw(key: KeyView): string {
  if (!key.rawKey) throw new Error('creation response without rawKey');
  return key.rawKey;
}

describe('private locations', () => {
  it('creates a location with defaults and a first key shown raw once', async () => {
    const created = await createLocation(acme);
    expect(created).toMatchObject({
      name: 'Office',
      slugName: 'office',
      icon: 'location',
      proxyUrl: null,
      updated_at: null,
    });
    expect(created.keys).toHaveLength(1);
    const key = first(created.keys);
    expect(raw(key)).toMatch(/^pl_[0-9a-f]{64}$/);
    expect(key.maskedKey).toBe(`pl_…${raw(key).slice(-4)}`);
    expect(await api.store.locations.findByKey(raw(key))).toMatchObject({ id: created.id });

    const fetched = json<LocationView>(await api.request(acme, 'GET', `/v1/private-locations/${created.id}`));
    expect(fetched.keys).toEqual([
      { id: key.id, maskedKey: key.maskedKey, created_at: key.created_at, updated_at: null },
    ]);
    const listed = json<LocationView[]>(await api.request(acme, 'GET', '/v1/private-locations'));
    expect(listed.map((l) => l.id)).toEqual([created.id]);
    expect(JSON.stringify(listed)).not.toContain(raw(key));
  });

  it('refuses a slug twice in one account but allows it in another', async () => {
    await createLocation(acme);
    const again = await api.request(acme, 'POST', '/v1/private-locations', { name: 'Office 2', slugName: 'office' });
    expect(again.statusCode).toBe(409);
    expect(json(again)).toMatchObject({ statusCode: 409, error: 'Conflict' });
    await createLocation(await api.newAccount('Other'));
  });

  it('validates the slug against the reference pattern', async () => {
    for (const slugName of ['eu-west-1', 'has space', 'x'.repeat(31)]) {
      const res = await api.request(acme, 'POST', '/v1/private-locations', { name: 'Office', slugName });
      expect(res.statusCode).toBe(400);
      expect(json(res).message).toMatch(/^body\/slugName must match pattern/);
    }
  });

  it('updates name, keeps icon and proxyUrl when left out', async () => {
    const created = json<LocationView>(
      await api.request(acme, 'POST', '/v1/private-locations', {
        name: 'Office',
        slugName: 'office',
        icon: 'home',
        proxyUrl: 'http://proxy:3128',
      }),
    );
    const res = await api.request(acme, 'PUT', `/v1/private-locations/${created.id}`, { name: 'HQ' });
    expect(res.statusCode).toBe(200);
    expect(json<LocationView>(res)).toMatchObject({
      name: 'HQ',
      slugName: 'office',
      icon: 'home',
      proxyUrl: 'http://proxy:3128',
    });
    expect(json<LocationView>(res).updated_at).toEqual(expect.any(String));
  });

  it('rotates keys: a second key is allowed, a third is a 409 until one is deleted', async () => {
    const created = await createLocation(acme);
    const second = await api.request(acme, 'POST', `/v1/private-locations/${created.id}/keys`);
    expect(second.statusCode).toBe(201);
    expect(json<KeyView>(second).rawKey).toMatch(/^pl_/);

    const third = await api.request(acme, 'POST', `/v1/private-locations/${created.id}/keys`);
    expect(third.statusCode).toBe(409);
    expect(json(third).message).toMatch(/delete one/);

    const del = await api.request(acme, 'DELETE', `/v1/private-locations/${created.id}/keys/${first(created.keys).id}`);
    expect(del.statusCode).toBe(204);
    expect(await api.store.locations.findByKey(raw(first(created.keys)))).toBeUndefined();
    expect((await api.request(acme, 'POST', `/v1/private-locations/${created.id}/keys`)).statusCode).toBe(201);
  });

  it("answers 404 for another account's location on every route, like a missing one", async () => {
    const created = await createLocation(acme);
    const other = await api.newAccount('Other');
    const keyId = first(created.keys).id;
    const attempts = [
      api.request(other, 'GET', `/v1/private-locations/${created.id}`),
      api.request(other, 'PUT', `/v1/private-locations/${created.id}`, { name: 'Mine' }),
      api.request(other, 'POST', `/v1/private-locations/${created.id}/keys`),
      api.request(other, 'DELETE', `/v1/private-locations/${created.id}/keys/${keyId}`),
      api.request(other, 'DELETE', `/v1/private-locations/${created.id}`),
    ];
    const missing = json(await api.request(other, 'GET', '/v1/private-locations/no-such-id'));
    for (const res of await Promise.all(attempts)) {
      expect(res.statusCode).toBe(404);
      expect(json(res).error).toBe(missing.error);
    }
    expect(json<LocationView[]>(await api.request(other, 'GET', '/v1/private-locations'))).toEqual([]);
    // Nothing changed for the owner.
    expect(json(await api.request(acme, 'GET', `/v1/private-locations/${created.id}`))).toMatchObject({
      name: 'Office',
      keys: [{ id: keyId }],
    });
  });

  it('refuses to delete a location checks still use, and deletes it once unused', async () => {
    const created = await createLocation(acme);
    const check = json<{ id: string }>(
      await api.request(acme, 'POST', '/v1/checks/api', {
        name: 'Home',
        privateLocations: ['office'],
        request: { method: 'GET', url: 'http://example.test' },
      }),
    );
    expect((await api.request(acme, 'DELETE', `/v1/private-locations/${created.id}`)).statusCode).toBe(409);
    await api.request(acme, 'DELETE', `/v1/checks/${check.id}`);
    expect((await api.request(acme, 'DELETE', `/v1/private-locations/${created.id}`)).statusCode).toBe(204);
    expect((await api.request(acme, 'GET', `/v1/private-locations/${created.id}`)).statusCode).toBe(404);
    expect(await api.store.locations.findByKey(raw(first(created.keys)))).toBeUndefined();
  });
});
