/**
 * URL and SSL monitors through the public API (POST/PUT /v1/checks/url and /v1/checks/ssl, and the
 * list, read and delete every type shares), on a real in-process service and store.
 */
import { describe, expect } from 'vitest';
import { toCheckDefinition } from '../../src/service/checks/definition.ts';
import { assertionsOf } from '../../src/service/web/console/assertions-view.ts';
import { responseOf } from '../../src/service/web/console/response-view.ts';
import type { SslCheckResult } from '../../src/shared/checks/monitors.ts';
import type { RunResult } from '../../src/shared/protocol.ts';
import { first, json, type TestAccount, type TestApi } from '../helpers/public-api.ts';
import { type CheckView, checksTest as it } from '../support/api-test.ts';
import { expectChecksHiddenFrom } from '../support/checks-of-another-account.ts';

/** The reference's SSL baseline defaults, written out: the tests pin them, not the constant src uses. */
const BASELINE_DEFAULTS = {
  enabled: true,
  minTLSVersion: { value: 'TLS1.2', severity: 'fail' },
  minKeySizeBits: { value: 2048, severity: 'fail' },
  weakSignatureAlgorithm: { severity: 'fail' },
  weakCipherSuite: { severity: 'fail' },
  knownBadCA: { severity: 'fail' },
  recommendedTLSVersion: { value: 'TLS1.3', severity: 'ignore' },
  recommendedKeySizeBits: { value: 3072, severity: 'ignore' },
  ocspMustStapleRespected: { severity: 'ignore' },
  sctPresent: { severity: 'ignore' },
};

async function rejected(
  api: TestApi,
  account: TestAccount,
  method: 'POST' | 'PUT',
  path: string,
  body: object,
): Promise<string> {
  const res = await api.request(account, method, path, body);
  expect(res.statusCode, res.body).toBe(400);
  return json(res).message;
}

const urlMinimal = { name: 'Home page', request: { url: 'https://www.example.test/' }, privateLocations: ['office'] };
const sslMinimal = {
  name: 'Edge certificate',
  request: { sslConfig: { hostname: 'www.example.test' } },
  privateLocations: ['office'],
};

type CreateCheck = (path: string, body: object) => Promise<CheckView>;

/**
 * Creates the check, expects the answer to match `view`, GET to return it unchanged and the stored
 * definition (what an agent runs) to match `definition`.
 */
async function createdWithDefaults(
  { api, acme, createCheck }: { api: TestApi; acme: TestAccount; createCheck: CreateCheck },
  path: string,
  body: object,
  expected: { view: object; definition: object },
): Promise<CheckView> {
  const created = await createCheck(path, body);
  expect(created).toMatchObject(expected.view);
  expect(json(await api.request(acme, 'GET', `/v1/checks/${created.id}`))).toEqual(created);
  const stored = await api.store.checks.get(acme.accountId, created.id);
  expect(stored && toCheckDefinition(stored)).toMatchObject(expected.definition);
  return created;
}

describe('URL monitors', () => {
  it('fills in the reference defaults (GET, 3000/5000 ms), reads back through GET and runs as a URL job', async ({
    api,
    acme,
    createCheck,
  }) => {
    const request = {
      method: 'GET',
      url: 'https://www.example.test/',
      followRedirects: true,
      skipSSL: false,
      ipFamily: 'IPv4',
      assertions: [],
    };
    const created = await createdWithDefaults({ api, acme, createCheck }, '/v1/checks/url', urlMinimal, {
      view: {
        name: 'Home page',
        checkType: 'URL',
        frequency: 10,
        degradedResponseTime: 3000,
        maxResponseTime: 5000,
        privateLocations: ['office'],
        request,
      },
      definition: { checkType: 'URL', degradedResponseTime: 3000, maxResponseTime: 5000, request },
    });
    expect(api.hookCalls.map((c) => c.checkId)).toEqual([created.id]);
  });

  it('takes status-code and response-time assertions and PUT merges the request', async ({
    api,
    acme,
    createCheck,
  }) => {
    const created = await createCheck('/v1/checks/url', {
      ...urlMinimal,
      request: {
        ...urlMinimal.request,
        assertions: [{ source: 'STATUS_CODE', comparison: 'LESS_THAN', target: '400' }],
      },
    });
    const res = await api.request(acme, 'PUT', `/v1/checks/url/${created.id}`, {
      request: {
        url: 'http://intranet.example.test/health',
        followRedirects: false,
        assertions: [{ source: 'RESPONSE_TIME', comparison: 'LESS_THAN', target: '800' }],
      },
      maxResponseTime: 2000,
    });
    expect(res.statusCode, res.body).toBe(200);
    expect(json<CheckView>(res)).toMatchObject({
      maxResponseTime: 2000,
      degradedResponseTime: 3000,
      request: {
        url: 'http://intranet.example.test/health',
        followRedirects: false,
        skipSSL: false,
        assertions: [{ source: 'RESPONSE_TIME', comparison: 'LESS_THAN', target: '800', property: '', regex: '' }],
      },
    });
  });

  it.for<[object, string]>([
    [{ name: 'x', request: {} }, 'body/request/url is required'],
    [
      { name: 'x', request: { url: 'ftp://files.example.test/' } },
      'body/request/url must be an http:// or https:// URL, got "ftp://files.example.test/"',
    ],
    [{ name: 'x', request: { url: 'https://x.test', method: 'POST' } }, 'body/request/method must be one of GET'],
    [
      { name: 'x', request: { url: 'https://x.test', assertions: [{ source: 'TEXT_BODY', comparison: 'CONTAINS' }] } },
      'body/request/assertions/0/source must be one of STATUS_CODE, RESPONSE_TIME',
    ],
    [
      {
        name: 'x',
        request: {
          url: 'https://x.test',
          assertions: [{ source: 'STATUS_CODE', comparison: 'CONTAINS', target: '2' }],
        },
      },
      'body/request/assertions/0/comparison must be one of EQUALS, NOT_EQUALS, LESS_THAN, GREATER_THAN',
    ],
    [
      {
        name: 'x',
        request: { url: 'https://x.test', assertions: [{ source: 'STATUS_CODE', comparison: 'EQUALS', target: 'ok' }] },
      },
      'body/request/assertions/0/target must be a number for STATUS_CODE EQUALS, got "ok"',
    ],
    [{ ...urlMinimal, maxResponseTime: 45001 }, 'body/maxResponseTime must be <= 45000'],
  ])('answers 400 naming the field for %j', async ([body, message], { api, acme }) => {
    expect(await rejected(api, acme, 'POST', '/v1/checks/url', body)).toContain(message);
  });
});

describe('SSL monitors', () => {
  it('fills in the reference defaults (port 443, 20 days, the baseline) and runs as an SSL job', async ({
    api,
    acme,
    createCheck,
  }) => {
    await createdWithDefaults({ api, acme, createCheck }, '/v1/checks/ssl', sslMinimal, {
      view: {
        name: 'Edge certificate',
        checkType: 'SSL',
        degradedResponseTime: 3000,
        maxResponseTime: 10000,
        request: {
          sslConfig: {
            hostname: 'www.example.test',
            port: 443,
            ipFamily: 'IPv4',
            skipChainValidation: false,
            handshakeTimeoutMs: 10000,
            alertDaysBeforeExpiry: 20,
            securityBaseline: BASELINE_DEFAULTS,
          },
          assertions: [],
        },
      },
      definition: {
        checkType: 'SSL',
        request: {
          sslConfig: { hostname: 'www.example.test', port: 443, serverName: null, alertDaysBeforeExpiry: 20 },
          assertions: [],
        },
      },
    });
  });

  it('PUT replaces sslConfig, filling what it leaves out with the defaults', async ({ api, acme, createCheck }) => {
    const created = await createCheck('/v1/checks/ssl', {
      ...sslMinimal,
      request: {
        sslConfig: {
          hostname: '10.0.0.5',
          port: 8443,
          serverName: 'api.example.test',
          securityBaseline: { minTLSVersion: { value: 'TLS1.3' } },
        },
        assertions: [{ source: 'CERTIFICATE', property: 'daysUntilExpiry', comparison: 'GREATER_THAN', target: '14' }],
      },
    });
    expect(created.request).toMatchObject({
      sslConfig: {
        port: 8443,
        serverName: 'api.example.test',
        securityBaseline: { ...BASELINE_DEFAULTS, minTLSVersion: { value: 'TLS1.3', severity: 'fail' } },
      },
    });
    const res = await api.request(acme, 'PUT', `/v1/checks/ssl/${created.id}`, {
      request: { sslConfig: { hostname: 'mail.example.test', port: 465, alertDaysBeforeExpiry: 30 } },
    });
    expect(res.statusCode, res.body).toBe(200);
    const updated = json<CheckView>(res);
    expect(updated.request.sslConfig).toEqual({
      hostname: 'mail.example.test',
      port: 465,
      ipFamily: 'IPv4',
      skipChainValidation: false,
      handshakeTimeoutMs: 10000,
      alertDaysBeforeExpiry: 30,
      securityBaseline: BASELINE_DEFAULTS,
    });
    // The assertions were not in the PUT: request merges one level deep.
    expect(updated.request.assertions).toHaveLength(1);
  });

  it.for<[object, string]>([
    [{ name: 'x', request: {} }, 'body/request/sslConfig is required'],
    [{ name: 'x', request: { sslConfig: { hostname: 'h', port: 0 } } }, 'body/request/sslConfig/port must be >= 1'],
    [
      { name: 'x', request: { sslConfig: { hostname: 'h\u0001' } } },
      'body/request/sslConfig/hostname must match pattern',
    ],
    [
      { name: 'x', request: { sslConfig: { hostname: 'h', alertDaysBeforeExpiry: 400 } } },
      'body/request/sslConfig/alertDaysBeforeExpiry must be <= 365',
    ],
    [
      { name: 'x', request: { sslConfig: { hostname: 'h', handshakeTimeoutMs: 500 } } },
      'body/request/sslConfig/handshakeTimeoutMs must be >= 1000',
    ],
    [
      {
        name: 'x',
        request: { sslConfig: { hostname: 'h', securityBaseline: { minTLSVersion: { severity: 'loud' } } } },
      },
      'body/request/sslConfig/securityBaseline/minTLSVersion/severity must be one of fail, degrade, ignore',
    ],
    [
      { name: 'x', request: { sslConfig: { hostname: 'h', clientCertificateMode: 'explicit' } } },
      'body/request/sslClientCertificateId is required when',
    ],
    [
      { name: 'x', request: { sslConfig: { hostname: 'h' }, sslClientCertificateId: 'none-such' } },
      'body/request/sslClientCertificateId: no client certificate',
    ],
    [
      { name: 'x', frequency: 0, frequencyOffset: 10, request: { sslConfig: { hostname: 'h' } } },
      'body/frequency must be 1 or more',
    ],
    [
      {
        name: 'x',
        request: {
          sslConfig: { hostname: 'h' },
          assertions: [{ source: 'CERTIFICATE', property: 'colour', comparison: 'EQUALS', target: 'x' }],
        },
      },
      'body/request/assertions/0/property must be one of daysUntilExpiry',
    ],
    [
      {
        name: 'x',
        request: {
          sslConfig: { hostname: 'h' },
          assertions: [
            { source: 'CERTIFICATE', property: 'daysUntilExpiry', comparison: 'GREATER_THAN', target: 'soon' },
          ],
        },
      },
      'body/request/assertions/0/target must be a number',
    ],
    [
      {
        name: 'x',
        request: { sslConfig: { hostname: 'h' }, assertions: [{ source: 'HEADERS', comparison: 'EQUALS' }] },
      },
      'body/request/assertions/0/source must be one of CERTIFICATE, CONNECTION, RESPONSE_TIME, JSON_RESPONSE, TEXT_RESPONSE',
    ],
    [{ ...sslMinimal, maxResponseTime: 30001 }, 'body/maxResponseTime must be <= 30000'],
  ])('answers 400 naming the field for %j', async ([body, message], { api, acme }) => {
    expect(await rejected(api, acme, 'POST', '/v1/checks/ssl', body)).toContain(message);
  });

  it('takes a TLS version as the target of an ordered tlsVersion assertion', async ({ createCheck }) => {
    const created = await createCheck('/v1/checks/ssl', {
      ...sslMinimal,
      request: {
        ...sslMinimal.request,
        assertions: [{ source: 'CONNECTION', property: 'tlsVersion', comparison: 'GREATER_THAN', target: 'TLS1.1' }],
      },
    });
    expect(created.request.assertions).toEqual([
      { source: 'CONNECTION', property: 'tlsVersion', comparison: 'GREATER_THAN', target: 'TLS1.1', regex: '' },
    ]);
  });

  it('a PUT whose sslConfig has no hostname is a 400 naming it', async ({ api, acme, createCheck }) => {
    const created = await createCheck('/v1/checks/ssl', sslMinimal);
    const message = await rejected(api, acme, 'PUT', `/v1/checks/ssl/${created.id}`, {
      request: { sslConfig: { port: 444 } },
    });
    expect(message).toBe('body/request/sslConfig/hostname is required: the host name or IP address to connect to');
  });
});

describe('both types beside the others', () => {
  it('appear in GET /v1/checks, filter by checkType, and delete like any check', async ({ api, acme, createCheck }) => {
    const url = await createCheck('/v1/checks/url', urlMinimal);
    const ssl = await createCheck('/v1/checks/ssl', sslMinimal);
    const listed = json<CheckView[]>(await api.request(acme, 'GET', '/v1/checks'));
    expect(listed.map((c) => [c.id, c.checkType])).toEqual([
      [url.id, 'URL'],
      [ssl.id, 'SSL'],
    ]);
    expect(listed).toEqual([url, ssl]);
    expect(first(json<CheckView[]>(await api.request(acme, 'GET', '/v1/checks?checkType=SSL'))).id).toBe(ssl.id);
    expect(json<CheckView[]>(await api.request(acme, 'GET', '/v1/checks?checkType=URL')).map((c) => c.id)).toEqual([
      url.id,
    ]);
    expect((await api.request(acme, 'DELETE', `/v1/checks/${url.id}`)).statusCode).toBe(204);
    expect(json<CheckView[]>(await api.request(acme, 'GET', '/v1/checks')).map((c) => c.id)).toEqual([ssl.id]);
  });

  it('another account sees none of them, and a check of another type is absent under these paths', async ({
    api,
    acme,
    other,
    createCheck,
  }) => {
    const url = await createCheck('/v1/checks/url', urlMinimal);
    const ssl = await createCheck('/v1/checks/ssl', sslMinimal);
    await expectChecksHiddenFrom(api, other, [
      ['url', url.id],
      ['ssl', ssl.id],
    ]);
    expect(json(await api.request(other, 'GET', '/v1/checks'))).toEqual([]);
    expect((await api.request(acme, 'PUT', `/v1/checks/ssl/${url.id}`, { name: 'x' })).statusCode).toBe(404);
    expect((await api.request(acme, 'PUT', `/v1/checks/url/${ssl.id}`, { name: 'x' })).statusCode).toBe(404);
    // Another account's private location slug is not this one's.
    const res = await api.request(other, 'POST', '/v1/checks/ssl', sslMinimal);
    expect([res.statusCode, json(res).message]).toEqual([
      400,
      'body/privateLocations: no private location with slugName "office" in this account',
    ]);
    expect(json<CheckView>(await api.request(acme, 'GET', `/v1/checks/${ssl.id}`)).name).toBe('Edge certificate');
  });
});

describe("the console's result page", () => {
  it("shows an SSL monitor's handshake, chain and assertions", () => {
    const leaf = { subjectCN: 'www.example.test', issuerCN: 'Example CA', daysUntilExpiry: 41 };
    const assertion = {
      source: 'CERTIFICATE',
      property: 'daysUntilExpiry',
      comparison: 'GREATER_THAN',
      target: '30',
      actual: 41,
      passed: true,
    } as const;
    const sslCheckResult = {
      assertions: [assertion],
      response: {
        protocol: 'TLS1.3',
        cipherSuite: 'TLS_AES_128_GCM_SHA256',
        resolvedIp: '10.0.0.5',
        daysUntilExpiry: 41,
        chainTrusted: true,
        hostnameVerified: true,
        certificate: leaf,
        chain: [leaf],
      },
    } as unknown as SslCheckResult;
    const result = { apiCheckResult: null, details: { sslCheckResult } } as unknown as RunResult;
    expect(responseOf(result)).toEqual({
      summary:
        'TLS1.3 TLS_AES_128_GCM_SHA256 from 10.0.0.5; www.example.test issued by Example CA, 41 days left; chain trusted, host name verified',
      headers: [],
      body: JSON.stringify([leaf], null, 2),
      bodyNote: null,
    });
    expect(assertionsOf(result)).toEqual([assertion]);
  });
});
