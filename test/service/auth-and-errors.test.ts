import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createAccount } from '../../src/service/accounts.ts';
import { ConfigError } from '../../src/shared/errors.ts';
import { json, startTestApi, type TestApi } from '../helpers/public-api.ts';

let api: TestApi;
beforeEach(async () => {
  api = await startTestApi();
});
afterEach(async () => {
  await api.close();
});

describe('authentication', () => {
  const get = (headers: Record<string, string>) =>
    api.app.inject({ method: 'GET', url: '/v1/private-locations', headers });

  it('accepts the key with its own account', async () => {
    const acme = await api.newAccount();
    expect((await get(acme.headers)).statusCode).toBe(200);
  });

  it('refuses a request without a key', async () => {
    const acme = await api.newAccount();
    const res = await get({ 'x-service-account': acme.accountId });
    expect(res.statusCode).toBe(401);
    expect(json(res)).toEqual({
      statusCode: 401,
      error: 'Unauthorized',
      message: expect.stringContaining('Authorization'),
    });
  });

  it('refuses a request without the account header', async () => {
    const acme = await api.newAccount();
    const res = await get({ authorization: acme.headers.authorization as string });
    expect(res.statusCode).toBe(401);
    expect(json(res).message).toContain('x-service-account');
  });

  it('refuses a wrong key', async () => {
    const acme = await api.newAccount();
    const res = await get({ ...acme.headers, authorization: `Bearer ${acme.apiKey.slice(0, -2)}xx` });
    expect(res.statusCode).toBe(401);
    expect(json(res).error).toBe('Unauthorized');
  });

  it("refuses a valid key used with another account's id", async () => {
    const acme = await api.newAccount('Acme');
    const other = await api.newAccount('Other');
    const res = await get({ authorization: `Bearer ${acme.apiKey}`, 'x-service-account': other.accountId });
    expect(res.statusCode).toBe(401);
  });

  it('authenticates before validating, so a bad body without a key is a 401', async () => {
    const res = await api.app.inject({ method: 'POST', url: '/v1/checks/api', payload: { nonsense: true } });
    expect(res.statusCode).toBe(401);
  });
});

describe('error shapes', () => {
  it('answers unknown routes with a 404 ApiError', async () => {
    const res = await api.app.inject({ method: 'GET', url: '/v1/nothing-here?x=1' });
    expect(res.statusCode).toBe(404);
    expect(json(res)).toEqual({ statusCode: 404, error: 'Not Found', message: 'No route GET /v1/nothing-here' });
  });

  it('answers malformed JSON with a 400 ApiError', async () => {
    const acme = await api.newAccount();
    const res = await api.app.inject({
      method: 'POST',
      url: '/v1/private-locations',
      headers: { ...acme.headers, 'content-type': 'application/json' },
      payload: '{"name":',
    });
    expect(res.statusCode).toBe(400);
    expect(Object.keys(json(res)).sort()).toEqual(['error', 'message', 'statusCode']);
  });

  it('hides internals of unexpected errors behind a generic 500', async () => {
    const acme = await api.newAccount();
    api.store.locations.list = async () => {
      throw new Error('SQLITE secret detail');
    };
    const res = await api.app.inject({ method: 'GET', url: '/v1/private-locations', headers: acme.headers });
    expect(res.statusCode).toBe(500);
    expect(json(res).error).toBe('Internal Server Error');
    expect(res.body).not.toContain('secret');
  });
});

describe('createAccount', () => {
  it('returns an account id and a working op_ key', async () => {
    const { accountId, apiKey } = await createAccount(api.store, '  Acme  ');
    expect(apiKey.startsWith('op_')).toBe(true);
    expect(await api.store.accounts.findAccountByApiKey(apiKey)).toMatchObject({ id: accountId, name: 'Acme' });
  });

  it.each(['', '   ', 'x'.repeat(256)])('rejects the name %j with a ConfigError naming --name', async (name) => {
    const error = await createAccount(api.store, name).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ConfigError);
    expect((error as ConfigError).setting).toBe('--name');
  });
});
