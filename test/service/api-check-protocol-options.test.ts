/**
 * The API check options of issue 15 through the public API, on a real in-process service and store:
 * request.maxResponseBytes (an Outpost extension, 1 byte to 16 MiB, no default) and the protocol
 * assertion sources HTTP_VERSION, TLS_VERSION and SSL_CERTIFICATE_DAYS_REMAINING, each a 400 naming
 * the field when it cannot work, and carried into the job the agent runs.
 */
import { describe, expect } from 'vitest';
import { toCheckDefinition } from '../../src/service/checks/definition.ts';
import { json } from '../helpers/public-api.ts';
import { apiTest } from '../support/api-test.ts';

type CheckView = Record<string, unknown> & { id: string; request: Record<string, unknown> };
const request = { method: 'GET', url: 'https://example.test/' };
const assertion = (source: string, comparison: string, target = '') => ({ source, comparison, property: '', target });

/** apiTest with `create` (an API check as Acme, failing the test unless 201) and `definitionOf` (the request the agent gets). */
const it = apiTest
  .extend('create', ({ api, acme }) => async (body: object): Promise<CheckView> => {
    const res = await api.request(acme, 'POST', '/v1/checks/api', body);
    expect(res.statusCode, res.body).toBe(201);
    return json<CheckView>(res);
  })
  .extend('definitionOf', ({ api, acme }) => async (id: string) => {
    const stored = await api.store.checks.get(acme.accountId, id);
    const definition = stored && toCheckDefinition(stored);
    if (!definition || !('request' in definition)) throw new Error('no API definition');
    return definition.request as Record<string, unknown>;
  });

describe('maxResponseBytes', () => {
  it('is stored, returned and sent to the agent when set; absent otherwise', async ({
    api,
    acme,
    create,
    definitionOf,
  }) => {
    const limited = await create({ name: 'Limited', request: { ...request, maxResponseBytes: 1_048_576 } });
    expect(limited.request.maxResponseBytes).toBe(1_048_576);
    expect(json<CheckView>(await api.request(acme, 'GET', `/v1/checks/${limited.id}`)).request.maxResponseBytes).toBe(
      1_048_576,
    );
    expect(await definitionOf(limited.id)).toMatchObject({ maxResponseBytes: 1_048_576 });

    const plain = await create({ name: 'Plain', request });
    expect(plain.request).not.toHaveProperty('maxResponseBytes');
    expect(await definitionOf(plain.id)).not.toHaveProperty('maxResponseBytes');
  });

  it('PUT can set it and clear it with null', async ({ api, acme, create, definitionOf }) => {
    const check = await create({ name: 'Limited', request });
    const set = await api.request(acme, 'PUT', `/v1/checks/api/${check.id}`, {
      request: { ...request, maxResponseBytes: 2048 },
    });
    expect(set.statusCode, set.body).toBe(200);
    expect(await definitionOf(check.id)).toMatchObject({ maxResponseBytes: 2048 });
    // request is merged one level deep: a PUT that leaves it out keeps it.
    const kept = await api.request(acme, 'PUT', `/v1/checks/api/${check.id}`, {
      request: { ...request, followRedirects: false },
    });
    expect(kept.statusCode, kept.body).toBe(200);
    expect(await definitionOf(check.id)).toMatchObject({ maxResponseBytes: 2048, followRedirects: false });
    const cleared = await api.request(acme, 'PUT', `/v1/checks/api/${check.id}`, {
      request: { ...request, maxResponseBytes: null },
    });
    expect(cleared.statusCode, cleared.body).toBe(200);
    expect(await definitionOf(check.id)).not.toHaveProperty('maxResponseBytes');
  });

  it.for([
    [0, 'body/request/maxResponseBytes must be >= 1'],
    [16 * 1024 * 1024 + 1, 'body/request/maxResponseBytes must be <= 16777216'],
    [1.5, 'body/request/maxResponseBytes must be integer'],
    ['big', 'body/request/maxResponseBytes must be integer'],
  ])('answers 400 naming the field for %j', async ([value, message], { api, acme }) => {
    const res = await api.request(acme, 'POST', '/v1/checks/api', {
      name: 'x',
      request: { ...request, maxResponseBytes: value },
    });
    expect(res.statusCode).toBe(400);
    expect(json(res).message).toContain(message);
  });
});

describe('protocol assertion sources', () => {
  it('accepts them with their comparisons and targets, and sends them to the agent as written', async ({
    create,
    definitionOf,
  }) => {
    const assertions = [
      assertion('HTTP_VERSION', 'EQUALS', '2'),
      assertion('HTTP_VERSION', 'GREATER_THAN', 'HTTP/1.1'),
      assertion('TLS_VERSION', 'GREATER_THAN', 'TLS1.2'),
      assertion('TLS_VERSION', 'EQUALS', 'TLSv1.3'),
      assertion('TLS_VERSION', 'NOT_NULL'),
      assertion('SSL_CERTIFICATE_DAYS_REMAINING', 'GREATER_THAN', '14'),
      assertion('SSL_CERTIFICATE_DAYS_REMAINING', 'LESS_THAN', '{{MAX_DAYS}}'),
    ];
    const check = await create({ name: 'Protocol', request: { ...request, assertions } });
    expect((check.request.assertions as unknown[]).length).toBe(7);
    expect((await definitionOf(check.id)).assertions).toEqual(assertions.map((a) => ({ ...a, regex: null })));
  });

  it.for<[ReturnType<typeof assertion>, RegExp]>([
    [
      assertion('HTTP_VERSIONS', 'EQUALS', '2'),
      /^body\/request\/assertions\/0\/source must be one of .*HTTP_VERSION, TLS_VERSION, SSL_CERTIFICATE_DAYS_REMAINING/,
    ],
    [
      assertion('HTTP_VERSION', 'CONTAINS', '2'),
      /^body\/request\/assertions\/0\/comparison must be one of EQUALS, NOT_EQUALS, GREATER_THAN, LESS_THAN, IS_NULL, NOT_NULL for HTTP_VERSION, got CONTAINS$/,
    ],
    [
      assertion('TLS_VERSION', 'HAS_KEY', 'x'),
      /^body\/request\/assertions\/0\/comparison .* for TLS_VERSION, got HAS_KEY$/,
    ],
    [
      assertion('HTTP_VERSION', 'EQUALS', 'h2'),
      /^body\/request\/assertions\/0\/target must be an HTTP version \(1.0, 1.1, 2 or 3\) for HTTP_VERSION, got "h2"$/,
    ],
    [
      assertion('TLS_VERSION', 'GREATER_THAN', 'SSLv3'),
      /^body\/request\/assertions\/0\/target must be a TLS version .* for TLS_VERSION, got "SSLv3"$/,
    ],
    [
      assertion('SSL_CERTIFICATE_DAYS_REMAINING', 'GREATER_THAN', 'two weeks'),
      /^body\/request\/assertions\/0\/target must be a whole number of days for SSL_CERTIFICATE_DAYS_REMAINING/,
    ],
    [
      assertion('SSL_CERTIFICATE_DAYS_REMAINING', 'EQUALS', ''),
      /^body\/request\/assertions\/0\/target must be a whole number of days/,
    ],
  ])('answers 400 naming the field for %j', async ([bad, message], { api, acme }) => {
    const res = await api.request(acme, 'POST', '/v1/checks/api', {
      name: 'x',
      request: { ...request, assertions: [bad] },
    });
    expect(res.statusCode, res.body).toBe(400);
    expect(json(res).message).toMatch(message);
    expect(api.hookCalls).toEqual([]);
  });

  it('PUT validates them too, naming the index', async ({ api, acme, create }) => {
    const check = await create({ name: 'Protocol', request });
    const assertions = [assertion('STATUS_CODE', 'EQUALS', '200'), assertion('TLS_VERSION', 'CONTAINS', '1.3')];
    const res = await api.request(acme, 'PUT', `/v1/checks/api/${check.id}`, { request: { ...request, assertions } });
    expect(res.statusCode).toBe(400);
    expect(json(res).message).toMatch(/^body\/request\/assertions\/1\/comparison /);
  });

  it('another account sees neither the check nor its options', async ({ api, other, create, definitionOf }) => {
    const check = await create({
      name: 'Mine',
      request: { ...request, maxResponseBytes: 4096, assertions: [assertion('HTTP_VERSION', 'EQUALS', '2')] },
    });
    expect((await api.request(other, 'GET', `/v1/checks/${check.id}`)).statusCode).toBe(404);
    const put = await api.request(other, 'PUT', `/v1/checks/api/${check.id}`, {
      request: { ...request, maxResponseBytes: 1 },
    });
    expect(put.statusCode).toBe(404);
    expect(await definitionOf(check.id)).toMatchObject({ maxResponseBytes: 4096 });
  });
});
