import { describe, expect } from 'vitest';
import { toCheckDefinition } from '../../src/service/checks/definition.ts';
import { groupOf } from '../../src/service/checks/group-of.ts';
import { userCodeContextOf } from '../../src/service/checks/user-code.ts';
import { readsOncePerBatch } from '../../src/service/dispatch/batch-reads.ts';
import { json, type TestAccount, type TestApi } from '../helpers/public-api.ts';
import { apiTest as it } from '../support/api-test.ts';

describe('/v1/variables', () => {
  it('creates, lists, reads, updates and deletes by key; a secret value is returned as null', async ({ api, acme }) => {
    const plain = await api.request(acme, 'POST', '/v1/variables', { key: 'BASE_URL', value: 'https://a.test' });
    expect(plain.statusCode).toBe(201);
    expect(json(plain)).toEqual({ key: 'BASE_URL', value: 'https://a.test', locked: false, secret: false });
    const secret = await api.request(acme, 'POST', '/v1/variables', {
      key: 'API_TOKEN',
      value: 'tok-123456',
      secret: true,
      locked: true,
    });
    expect(json(secret)).toEqual({ key: 'API_TOKEN', value: null, locked: true, secret: true });

    const list = await api.request(acme, 'GET', '/v1/variables');
    expect(json(list)).toEqual([
      { key: 'BASE_URL', value: 'https://a.test', locked: false, secret: false },
      { key: 'API_TOKEN', value: null, locked: true, secret: true },
    ]);
    expect(json(await api.request(acme, 'GET', '/v1/variables/API_TOKEN'))).toEqual({
      key: 'API_TOKEN',
      value: null,
      locked: true,
      secret: true,
    });
    expect(list.body).not.toContain('tok-123456');

    const updated = await api.request(acme, 'PUT', '/v1/variables/BASE_URL', { value: 'https://b.test', locked: true });
    expect(json(updated)).toEqual({ key: 'BASE_URL', value: 'https://b.test', locked: true, secret: false });
    // Omitted flags keep what is stored.
    expect(json(await api.request(acme, 'PUT', '/v1/variables/BASE_URL', { value: 'https://c.test' }))).toMatchObject({
      locked: true,
    });

    expect((await api.request(acme, 'DELETE', '/v1/variables/BASE_URL')).statusCode).toBe(204);
    expect((await api.request(acme, 'GET', '/v1/variables/BASE_URL')).statusCode).toBe(404);
    expect((await api.request(acme, 'DELETE', '/v1/variables/BASE_URL')).statusCode).toBe(404);
  });

  it('keeps a secret secret and the key unchangeable', async ({ api, acme }) => {
    await api.request(acme, 'POST', '/v1/variables', { key: 'S', value: 'hunter22', secret: true });
    const unset = await api.request(acme, 'PUT', '/v1/variables/S', { value: 'x', secret: false });
    expect(unset.statusCode).toBe(400);
    expect(json<{ message: string }>(unset).message).toMatch(/body\/secret/);
    const rename = await api.request(acme, 'PUT', '/v1/variables/S', { key: 'T', value: 'x' });
    expect(json<{ message: string }>(rename).message).toMatch(/body\/key/);
    // A new value for a secret stays secret.
    expect(json(await api.request(acme, 'PUT', '/v1/variables/S', { value: 'hunter33' }))).toEqual({
      key: 'S',
      value: null,
      locked: false,
      secret: true,
    });
    expect((await api.store.variables.get(acme.accountId, 'S'))?.value).toBe('hunter33');
  });

  it('rejects bad keys, duplicates and an empty value on update, naming the field', async ({ api, acme }) => {
    for (const key of ['', '1ABC', 'WITH-DASH', 'a b']) {
      const res = await api.request(acme, 'POST', '/v1/variables', { key, value: 'v' });
      expect(res.statusCode, key).toBe(400);
      expect(json<{ message: string }>(res).message).toMatch(/key/);
    }
    expect((await api.request(acme, 'POST', '/v1/variables', { key: '_OK_1', value: '' })).statusCode).toBe(201);
    const dup = await api.request(acme, 'POST', '/v1/variables', { key: '_OK_1', value: 'again' });
    expect(dup.statusCode).toBe(409);
    expect(json<{ message: string }>(dup).message).toMatch(/body\/key/);
    const empty = await api.request(acme, 'PUT', '/v1/variables/_OK_1', { value: '' });
    expect(empty.statusCode).toBe(400);
    expect(json<{ message: string }>(empty).message).toMatch(/value/);
  });

  it("never shows or changes another account's variable", async ({ api, acme, other }) => {
    await api.request(acme, 'POST', '/v1/variables', { key: 'MINE', value: 'v' });
    expect((await api.request(other, 'GET', '/v1/variables/MINE')).statusCode).toBe(404);
    expect((await api.request(other, 'PUT', '/v1/variables/MINE', { value: 'x' })).statusCode).toBe(404);
    expect((await api.request(other, 'DELETE', '/v1/variables/MINE')).statusCode).toBe(404);
    expect(json(await api.request(other, 'GET', '/v1/variables'))).toEqual([]);
    // The same key in another account is its own variable.
    expect((await api.request(other, 'POST', '/v1/variables', { key: 'MINE', value: 'theirs' })).statusCode).toBe(201);
  });

  it('pages with limit and page', async ({ api, acme }) => {
    for (const k of ['A', 'B', 'C']) await api.request(acme, 'POST', '/v1/variables', { key: k, value: k });
    const page2 = json<Array<{ key: string }>>(await api.request(acme, 'GET', '/v1/variables?limit=2&page=2'));
    expect(page2.map((v) => v.key)).toEqual(['C']);
  });
});

describe('environmentVariables of checks', () => {
  const check = (vars: object[]) => ({
    name: 'c',
    request: { method: 'GET', url: 'https://x.test/' },
    environmentVariables: vars,
  });
  /** POST /v1/checks/api as `account` of a check with `vars`. */
  const postCheckWith = (api: TestApi, account: TestAccount, vars: object[]) =>
    api.request(account, 'POST', '/v1/checks/api', check(vars));

  it('stores them, returns secret values as null and keeps a secret a PUT sends back as null', async ({
    api,
    acme,
  }) => {
    const res = await postCheckWith(api, acme, [
      { key: 'PLAIN', value: 'p' },
      { key: 'PW', value: 'pa55word', secret: true },
    ]);
    expect(res.statusCode, res.body).toBe(201);
    const created = json<{ id: string; environmentVariables: unknown[] }>(res);
    expect(created.environmentVariables).toEqual([
      { key: 'PLAIN', value: 'p', locked: false, secret: false },
      { key: 'PW', value: null, locked: false, secret: true },
    ]);
    expect(res.body).not.toContain('pa55word');
    const got = await api.request(acme, 'GET', `/v1/checks/${created.id}`);
    expect(got.body).not.toContain('pa55word');

    // GET → PUT round trip: the null keeps the stored secret.
    const put = await api.request(acme, 'PUT', `/v1/checks/api/${created.id}`, {
      environmentVariables: json<{ environmentVariables: object[] }>(got).environmentVariables,
    });
    expect(put.statusCode, put.body).toBe(200);
    const stored = await api.store.checks.get(acme.accountId, created.id);
    expect(stored?.body.environmentVariables).toEqual([
      { key: 'PLAIN', value: 'p', locked: false, secret: false },
      { key: 'PW', value: 'pa55word', locked: false, secret: true },
    ]);
  });

  it('rejects duplicate keys, a null value without a stored secret, and un-secreting', async ({ api, acme }) => {
    const dup = await postCheckWith(api, acme, [
      { key: 'A', value: '1' },
      { key: 'A', value: '2' },
    ]);
    expect(json<{ message: string }>(dup).message).toMatch(/body\/environmentVariables\/1\/key/);
    const nullValue = await postCheckWith(api, acme, [{ key: 'A', value: null }]);
    expect(nullValue.statusCode).toBe(400);
    expect(json<{ message: string }>(nullValue).message).toMatch(/body\/environmentVariables\/0\/value/);
    const created = json<{ id: string }>(
      await postCheckWith(api, acme, [{ key: 'S', value: 'secret-1', secret: true }]),
    );
    const unset = await api.request(acme, 'PUT', `/v1/checks/api/${created.id}`, {
      environmentVariables: [{ key: 'S', value: 'x', secret: false }],
    });
    expect(unset.statusCode).toBe(400);
    expect(json<{ message: string }>(unset).message).toMatch(/body\/environmentVariables\/0\/secret/);
  });

  it('reach the job merged account → group → check, later levels winning by key', async ({ api, acme }) => {
    await api.request(acme, 'POST', '/v1/variables', { key: 'LEVEL', value: 'account' });
    await api.request(acme, 'POST', '/v1/variables', { key: 'ACCOUNT_ONLY', value: 'a-secret', secret: true });
    await api.request(acme, 'POST', '/v1/variables', { key: 'GROUP_WINS', value: 'account' });
    const group = await api.request(acme, 'POST', '/v2/check-groups', {
      name: 'g',
      environmentVariables: [
        { key: 'LEVEL', value: 'group' },
        { key: 'GROUP_WINS', value: 'group' },
      ],
    });
    expect(group.statusCode, group.body).toBe(201);
    const groupId = json<{ id: number }>(group).id;
    const created = await api.request(acme, 'POST', '/v1/checks/api', {
      ...check([{ key: 'LEVEL', value: 'check', secret: true }]),
      groupId,
    });
    expect(created.statusCode, created.body).toBe(201);
    const stored = await api.store.checks.get(acme.accountId, json<{ id: string }>(created).id);
    if (!stored) throw new Error('not stored');
    const g = await groupOf(api.store, stored);
    const def = toCheckDefinition(stored, g, await userCodeContextOf(api.store, stored, g));
    expect(def.environmentVariables).toEqual([
      { key: 'ACCOUNT_ONLY', value: 'a-secret', secret: true },
      { key: 'GROUP_WINS', value: 'group', secret: false },
      { key: 'LEVEL', value: 'check', secret: true },
    ]);
    // Without scripts an API check needs no runtime: it keeps what it names.
    expect(def.runtimeId).toBeNull();
  });
});

/** Counts the store's reads of account variables. */
function countVariableReads(api: TestApi): { count: number } {
  const counter = { count: 0 };
  const list = api.store.variables.list.bind(api.store.variables);
  api.store.variables.list = (accountId, opts) => {
    counter.count++;
    return list(accountId, opts);
  };
  return counter;
}

describe('readsOncePerBatch', () => {
  it("reads each account's variables once per batch, keeps accounts apart, and a new batch sees a change", async ({
    api,
    acme,
    other,
  }) => {
    await api.request(acme, 'POST', '/v1/variables', { key: 'TOKEN', value: 'acme-1', secret: true });
    await api.request(other, 'POST', '/v1/variables', { key: 'TOKEN', value: 'other-1' });
    const reads = countVariableReads(api);
    const batch = readsOncePerBatch(api.store);
    const [a1, a2, o1] = await Promise.all([
      batch.variables.list(acme.accountId),
      batch.variables.list(acme.accountId),
      batch.variables.list(other.accountId),
    ]);
    expect(a1.map((v) => v.value)).toEqual(['acme-1']);
    expect(a2).toBe(a1);
    expect(o1.map((v) => v.value)).toEqual(['other-1']);
    expect(reads.count).toBe(2);

    await api.request(acme, 'PUT', '/v1/variables/TOKEN', { value: 'acme-2' });
    expect((await readsOncePerBatch(api.store).variables.list(acme.accountId)).map((v) => v.value)).toEqual(['acme-2']);
    // A page of the list (the API's) is never memoised.
    await batch.variables.list(acme.accountId, { limit: 10, page: 1 });
    expect(reads.count).toBe(4);
  });

  it("reads a group once per batch and never another account's", async ({ api, acme, other }) => {
    const created = await api.request(acme, 'POST', '/v2/check-groups', { name: 'g' });
    expect(created.statusCode, created.body).toBe(201);
    const { id } = json<{ id: number }>(created);
    const batch = readsOncePerBatch(api.store);
    const first = await batch.checkGroups.get(acme.accountId, id);
    expect(first?.body.name).toBe('g');
    expect(await batch.checkGroups.get(acme.accountId, id)).toBe(first);
    expect(await batch.checkGroups.get(other.accountId, id)).toBeUndefined();
  });
});
