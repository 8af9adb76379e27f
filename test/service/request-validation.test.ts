/**
 * Request validation the stores and agents rely on: integer bounds (a value the store cannot read
 * back is a 400, and nothing is written), http(s) URLs, and assertion targets that can work.
 * docs/api.md "Validation".
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { json, startTestApi, type TestAccount, type TestApi } from '../helpers/public-api.ts';

let api: TestApi;
let acme: TestAccount;
beforeAll(async () => {
  api = await startTestApi();
});
// A fresh account per test: what one test stores is invisible to the next.
beforeEach(async () => {
  acme = await api.newAccount('Acme');
});
afterAll(async () => {
  await api.close();
});

async function expect400(method: 'POST' | 'PUT' | 'GET', url: string, payload: object | undefined, field: string) {
  const res = await api.request(acme, method, url, payload);
  expect(res.statusCode, res.body).toBe(400);
  const body = json(res);
  expect(body).toMatchObject({ statusCode: 400, error: 'Bad Request' });
  expect(body.message.startsWith(`${field} `), body.message).toBe(true);
  return body.message;
}

describe('integer bounds', () => {
  it.each(['9007199254740993', '1e20', '9223372036854775808'])(
    'refuses a check group concurrency of %s without storing the group',
    async (concurrency) => {
      // Raw JSON text, so the number reaches the service's parser as a client wrote it.
      const res = await api.app.inject({
        method: 'POST',
        url: '/v2/check-groups',
        headers: { ...acme.headers, 'content-type': 'application/json' },
        payload: `{"name":"G","concurrency":${concurrency}}`,
      });
      expect(res.statusCode, res.body).toBe(400);
      expect(json(res).message).toBe('body/concurrency must be <= 1000');
      const list = await api.request(acme, 'GET', '/v1/check-groups');
      expect(list.statusCode).toBe(200);
      expect(list.json()).toEqual([]);
    },
  );

  it.each(['/v1/checks', '/v1/check-groups', '/v1/dashboards', '/v1/variables', '/v1/snippets'])(
    'answers 400 for %s?page=1e20',
    async (path) => {
      expect(await expect400('GET', `${path}?page=1e20`, undefined, 'querystring/page')).toBe(
        'querystring/page must be <= 100000',
      );
      expect((await api.request(acme, 'GET', `${path}?page=100000`)).statusCode).toBe(200);
    },
  );

  it('answers 400 for ids the store cannot hold, in paths and bodies', async () => {
    await expect400('GET', '/v1/check-groups/9007199254740993', undefined, 'params/id');
    await expect400('GET', '/v1/snippets/1e20', undefined, 'params/id');
    await expect400(
      'POST',
      '/v1/checks/api',
      { name: 'c', request: { method: 'GET', url: 'https://a.test/' }, groupId: 1e20 },
      'body/groupId',
    );
    await expect400(
      'POST',
      '/v1/checks/api',
      { name: 'c', request: { method: 'GET', url: 'https://a.test/' }, groupOrder: 2 ** 63 },
      'body/groupOrder',
    );
    await expect400('POST', '/v1/triggers/check-groups/1e20', undefined, 'params/groupId');
  });
});

describe('URLs', () => {
  const apiCheck = (url: string) => ({ name: 'c', request: { method: 'GET', url } });

  it.each([
    ['javascript:alert(1)', 'must be an http:// or https:// URL'],
    ['file:///etc/passwd', 'must be an http:// or https:// URL'],
    ['ftp://example.test/', 'must be an http:// or https:// URL'],
    ['http://[::1', 'must be a valid URL'],
  ])('refuses the API check URL %s, naming body/request/url', async (url, problem) => {
    const message = await expect400('POST', '/v1/checks/api', apiCheck(url), 'body/request/url');
    expect(message).toContain(problem);
    expect((await api.request(acme, 'GET', '/v1/checks')).json()).toEqual([]);
  });

  it.each([
    'https://{{HOST}}/path',
    'http://{{HOST}}:{{PORT}}/x?q={{{Q}}}',
    '{{BASE_URL}}/health',
    'HTTPS://EXAMPLE.TEST/',
  ])('accepts the API check URL %s (placeholders the agent substitutes)', async (url) => {
    const res = await api.request(acme, 'POST', '/v1/checks/api', apiCheck(url));
    expect(res.statusCode, res.body).toBe(201);
  });

  it('refuses a bad URL on PUT and keeps the stored check', async () => {
    const created = await api.request(acme, 'POST', '/v1/checks/api', apiCheck('https://a.test/'));
    const { id } = json<{ id: string }>(created);
    await expect400('PUT', `/v1/checks/api/${id}`, { request: { url: 'file:///etc/passwd' } }, 'body/request/url');
    expect(json<{ request: { url: string } }>(await api.request(acme, 'GET', `/v1/checks/${id}`)).request.url).toBe(
      'https://a.test/',
    );
  });

  it("checks a group member's URL as the group's base URL makes it", async () => {
    const based = json<{ id: number }>(
      await api.request(acme, 'POST', '/v2/check-groups', {
        name: 'Based',
        apiCheckDefaults: { url: 'https://api.example.test' },
      }),
    );
    const bare = json<{ id: number }>(await api.request(acme, 'POST', '/v2/check-groups', { name: 'Bare' }));
    const member = (groupId: number | null, url: string) => ({ ...apiCheck(url), groupId });
    expect((await api.request(acme, 'POST', '/v1/checks/api', member(based.id, '/health'))).statusCode).toBe(201);
    expect(
      (await api.request(acme, 'POST', '/v1/checks/api', member(based.id, '{{GROUP_BASE_URL}}/v2'))).statusCode,
    ).toBe(201);
    await expect400('POST', '/v1/checks/api', member(bare.id, '/health'), 'body/request/url');
    await expect400('POST', '/v1/checks/api', member(null, '/health'), 'body/request/url');
    await expect400('POST', '/v1/checks/api', member(based.id, 'javascript:alert(1)'), 'body/request/url');
  });

  it("refuses a group's apiCheckDefaults.url that is not http(s)", async () => {
    await expect400(
      'POST',
      '/v2/check-groups',
      { name: 'G', apiCheckDefaults: { url: 'javascript:alert(1)' } },
      'body/apiCheckDefaults/url',
    );
    const ok = await api.request(acme, 'POST', '/v2/check-groups', {
      name: 'G',
      apiCheckDefaults: { url: 'https://{{HOST}}' },
    });
    expect(ok.statusCode, ok.body).toBe(201);
  });

  it.each(['logo', 'logoDark', 'favicon', 'redirectTo'])(
    'refuses a status page %s that is not an http(s) URL',
    async (field) => {
      const page = { name: 'P', url: `page-${field.toLowerCase()}`, cards: [] };
      for (const bad of ['javascript:alert(1)', 'file:///etc/passwd', 'https://[::1']) {
        await expect400('POST', '/v1/status-pages', { ...page, [field]: bad }, `body/${field}`);
      }
      const ok = await api.request(acme, 'POST', '/v1/status-pages', {
        ...page,
        [field]: 'https://cdn.example.test/logo.png',
      });
      expect(ok.statusCode, ok.body).toBe(201);
      const { id } = json<{ id: string }>(ok);
      await expect400('PUT', `/v1/status-pages/${id}`, { ...page, [field]: 'javascript:alert(1)' }, `body/${field}`);
    },
  );
});

const apiCheckBody = { name: 'c', request: { method: 'GET', url: 'https://a.test/' } };

describe('assertion targets', () => {
  const withAssertion = (assertion: object) => ({
    name: 'c',
    request: { method: 'GET', url: 'https://a.test/', assertions: [assertion] },
  });

  it.each([
    [{ source: 'STATUS_CODE', comparison: 'EQUALS', target: 'abc' }, 'body/request/assertions/0/target'],
    [{ source: 'STATUS_CODE', comparison: 'NOT_EQUALS', target: '' }, 'body/request/assertions/0/target'],
    [{ source: 'RESPONSE_TIME', comparison: 'LESS_THAN', target: 'fast' }, 'body/request/assertions/0/target'],
    [{ source: 'TEXT_BODY', comparison: 'GREATER_THAN', target: 'x' }, 'body/request/assertions/0/target'],
    [{ source: 'STATUS_CODE', comparison: 'HAS_KEY', target: 'a' }, 'body/request/assertions/0/comparison'],
    [{ source: 'TEXT_BODY', comparison: 'CONTAINS', target: 'a', regex: '(' }, 'body/request/assertions/0/regex'],
    [
      { source: 'HEADERS', property: 'x', comparison: 'EQUALS', target: 'a', regex: '/(/i' },
      'body/request/assertions/0/regex',
    ],
  ])('refuses the API check assertion %j', async (assertion, field) => {
    await expect400('POST', '/v1/checks/api', withAssertion(assertion), field);
  });

  it.each([
    { source: 'STATUS_CODE', comparison: 'EQUALS', target: '200' },
    { source: 'STATUS_CODE', comparison: 'EQUALS', target: '{{EXPECTED_STATUS}}' },
    { source: 'RESPONSE_TIME', comparison: 'LESS_THAN', target: ' 1500.5 ' },
    { source: 'HEADERS', property: 'content-type', comparison: 'EQUALS', target: 'abc' },
    { source: 'JSON_BODY', property: '$.ok', comparison: 'EQUALS', target: 'true' },
    { source: 'TEXT_BODY', comparison: 'IS_EMPTY' },
    { source: 'STATUS_CODE', comparison: 'NOT_NULL' },
    { source: 'TEXT_BODY', comparison: 'CONTAINS', target: 'ok', regex: '/^(\\w+)$/im' },
  ])('accepts the API check assertion %j', async (assertion) => {
    const res = await api.request(acme, 'POST', '/v1/checks/api', withAssertion(assertion));
    expect(res.statusCode, res.body).toBe(201);
  });

  it('stores assertions and headers a PUT carries with their defaults, so the check reads back', async () => {
    const created = json<{ id: string }>(
      await api.request(acme, 'POST', '/v1/checks/dns', { name: 'd', request: { query: 'a.test', recordType: 'A' } }),
    );
    const put = await api.request(acme, 'PUT', `/v1/checks/dns/${created.id}`, {
      request: { assertions: [{ source: 'TEXT_ANSWER', comparison: 'NOT_EMPTY' }] },
    });
    expect(put.statusCode, put.body).toBe(200);
    const api1 = json<{ id: string }>(await api.request(acme, 'POST', '/v1/checks/api', apiCheckBody));
    const putApi = await api.request(acme, 'PUT', `/v1/checks/api/${api1.id}`, {
      request: {
        headers: [{ key: 'X', value: 'y' }],
        assertions: [{ source: 'STATUS_CODE', comparison: 'EQUALS', target: '200' }],
      },
    });
    expect(putApi.statusCode, putApi.body).toBe(200);
    const list = await api.request(acme, 'GET', '/v1/checks');
    expect(list.statusCode, list.body).toBe(200);
    const byId = new Map(
      json<Array<{ id: string; request: Record<string, unknown> }>>(list).map((c) => [c.id, c.request]),
    );
    expect(byId.get(created.id)?.assertions).toEqual([
      { source: 'TEXT_ANSWER', comparison: 'NOT_EMPTY', property: '', target: '', regex: '' },
    ]);
    expect(byId.get(api1.id)?.headers).toEqual([{ key: 'X', value: 'y', locked: false }]);
  });

  it('checks TCP, DNS and ICMP assertion targets, and a group’s default assertions', async () => {
    const bad = { comparison: 'LESS_THAN', target: 'soon' };
    await expect400(
      'POST',
      '/v1/checks/tcp',
      { name: 't', request: { hostname: 'h', port: 80, assertions: [{ source: 'RESPONSE_TIME', ...bad }] } },
      'body/request/assertions/0/target',
    );
    await expect400(
      'POST',
      '/v1/checks/dns',
      { name: 'd', request: { query: 'a.test', recordType: 'A', assertions: [{ source: 'RESPONSE_TIME', ...bad }] } },
      'body/request/assertions/0/target',
    );
    await expect400(
      'POST',
      '/v1/checks/icmp',
      { name: 'i', request: { hostname: 'h', assertions: [{ source: 'LATENCY', property: 'avg', ...bad }] } },
      'body/request/assertions/0/target',
    );
    await expect400(
      'POST',
      '/v1/checks/icmp',
      {
        name: 'i',
        request: {
          hostname: 'h',
          assertions: [{ source: 'LATENCY', property: 'mean', comparison: 'LESS_THAN', target: '5' }],
        },
      },
      'body/request/assertions/0/property',
    );
    const icmp = await api.request(acme, 'POST', '/v1/checks/icmp', {
      name: 'i',
      request: {
        hostname: 'h',
        assertions: [{ source: 'LATENCY', property: 'stdDev', comparison: 'LESS_THAN', target: '5' }],
      },
    });
    expect(icmp.statusCode, icmp.body).toBe(201);
    await expect400(
      'POST',
      '/v2/check-groups',
      { name: 'G', apiCheckDefaults: { assertions: [{ source: 'STATUS_CODE', comparison: 'EQUALS', target: 'abc' }] } },
      'body/apiCheckDefaults/assertions/0/target',
    );
    const dns = await api.request(acme, 'POST', '/v1/checks/dns', {
      name: 'd',
      request: {
        query: 'a.test',
        recordType: 'A',
        assertions: [{ source: 'RESPONSE_CODE', comparison: 'EQUALS', target: 'NOERROR' }],
      },
    });
    expect(dns.statusCode, dns.body).toBe(201);
  });
});
