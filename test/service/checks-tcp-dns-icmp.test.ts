import { describe, expect } from 'vitest';
import { toCheckDefinition } from '../../src/service/checks/definition.ts';
import { first, json, type TestAccount, type TestApi } from '../helpers/public-api.ts';
import { checkDefaults, type CheckView, checksTest as it } from '../support/api-test.ts';
import { expectChecksHiddenFrom } from '../support/checks-of-another-account.ts';

const tcpMinimal = { name: 'Postgres port', request: { hostname: 'db.example.test', port: 5432 } };
const dnsMinimal = { name: 'Apex A', request: { query: 'example.test', recordType: 'A' } };
const icmpMinimal = { name: 'Gateway ping', request: { hostname: 'gw.example.test' } };

type CreateCheck = (path: string, body: object) => Promise<CheckView>;

/** Creates `minimal` at "office" and expects it back with every reference default and `expected`. */
async function expectCreatedWithDefaults(
  createCheck: CreateCheck,
  path: string,
  minimal: object,
  expected: Record<string, unknown>,
): Promise<CheckView> {
  const created = await createCheck(path, { ...minimal, privateLocations: ['office'] });
  expect(created).toEqual({ ...checkDefaults, ...expected });
  return created;
}

/** The job definition an agent leases for the stored check (undefined when it is not stored). */
async function jobOf(api: TestApi, account: TestAccount, checkId: string) {
  const stored = await api.store.checks.get(account.accountId, checkId);
  return stored && toCheckDefinition(stored);
}

/** The request of that job. */
async function jobRequestOf(api: TestApi, account: TestAccount, checkId: string): Promise<unknown> {
  return ((await jobOf(api, account, checkId)) as { request?: unknown } | undefined)?.request;
}

/** POST `path` with `body` as `account` answers 400 Bad Request with exactly `message`. */
async function expectBadRequest(
  api: TestApi,
  account: TestAccount,
  path: string,
  body: object,
  message: string,
): Promise<void> {
  const res = await api.request(account, 'POST', path, body);
  expect(res.statusCode).toBe(400);
  expect(json(res)).toEqual({ statusCode: 400, error: 'Bad Request', message });
}

/** The message of the 400 that POST `path` with `body` answers as `account`. */
async function refusalOf(api: TestApi, account: TestAccount, path: string, body: object): Promise<string> {
  const res = await api.request(account, 'POST', path, body);
  expect(res.statusCode).toBe(400);
  return json<{ message: string }>(res).message;
}

describe('TCP checks', () => {
  it('fills in the reference defaults (3000/5000 ms) and reads back through GET /v1/checks/{id}', async ({
    api,
    acme,
    createCheck,
  }) => {
    const created = await expectCreatedWithDefaults(createCheck, '/v1/checks/tcp', tcpMinimal, {
      name: 'Postgres port',
      checkType: 'TCP',
      degradedResponseTime: 3000,
      maxResponseTime: 5000,
      request: { hostname: 'db.example.test', port: 5432, data: null, ipFamily: 'IPv4', assertions: [] },
    });
    const got = await api.request(acme, 'GET', `/v1/checks/${created.id}`);
    expect(json(got)).toEqual(created);
    expect(api.hookCalls.map((c) => c.checkId)).toEqual([created.id]);
  });

  it('takes the reference older spellings url and body for hostname and data', async ({ createCheck }) => {
    const created = await createCheck('/v1/checks/tcp', {
      name: 'Old client',
      request: { url: 'mail.example.test', port: 25, body: 'EHLO x\r\n' },
    });
    expect(created.request).toMatchObject({ hostname: 'mail.example.test', data: 'EHLO x\r\n' });
    expect(created.request).not.toHaveProperty('url');
  });

  it.for<[object, string]>([
    [
      { name: 'x', request: { port: 80 } },
      'body/request/hostname is required: the host name or IP address to connect to',
    ],
    [{ name: 'x', request: { hostname: 'h' } }, 'body/request/port is required'],
    [{ name: 'x', request: { hostname: 'h', port: 70000 } }, 'body/request/port must be <= 65535'],
    [
      { name: 'x', request: { hostname: 'h', port: 80, ipFamily: 'IPv5' } },
      'body/request/ipFamily must be one of IPv4, IPv6',
    ],
    [
      {
        name: 'x',
        request: { hostname: 'h', port: 80, assertions: [{ source: 'STATUS_CODE', comparison: 'EQUALS' }] },
      },
      'body/request/assertions/0/source must be one of RESPONSE_DATA, RESPONSE_TIME',
    ],
    [
      {
        name: 'x',
        request: { hostname: 'h', port: 80, assertions: [{ source: 'RESPONSE_DATA', comparison: 'HAS_KEY' }] },
      },
      'body/request/assertions/0/comparison must be one of EQUALS, NOT_EQUALS, IS_EMPTY, NOT_EMPTY, LESS_THAN, GREATER_THAN, CONTAINS, NOT_CONTAINS',
    ],
    [{ ...tcpMinimal, maxResponseTime: 45001 }, 'body/maxResponseTime must be <= 45000'],
  ])('answers 400 naming the field for %j', ([body, message], { api, acme }) =>
    expectBadRequest(api, acme, '/v1/checks/tcp', body, message),
  );

  it('PUT changes only what it carries and merges request one level deep', async ({ api, acme, createCheck }) => {
    const created = await createCheck('/v1/checks/tcp', {
      ...tcpMinimal,
      request: { ...tcpMinimal.request, data: 'PING\n' },
    });
    const res = await api.request(acme, 'PUT', `/v1/checks/tcp/${created.id}`, {
      request: { port: 6379 },
      degradedResponseTime: 100,
    });
    expect(res.statusCode, res.body).toBe(200);
    const updated = json<CheckView>(res);
    expect(updated.request).toEqual({
      hostname: 'db.example.test',
      port: 6379,
      data: 'PING\n',
      ipFamily: 'IPv4',
      assertions: [],
    });
    expect(updated.degradedResponseTime).toBe(100);
    expect(updated.maxResponseTime).toBe(5000);
  });

  it('becomes a TCP job definition', async ({ api, acme, createCheck }) => {
    const created = await createCheck('/v1/checks/tcp', {
      ...tcpMinimal,
      shouldFail: true,
      request: {
        ...tcpMinimal.request,
        ipFamily: 'IPv6',
        assertions: [{ source: 'RESPONSE_DATA', comparison: 'CONTAINS', target: '+OK' }],
      },
    });
    expect(await jobOf(api, acme, created.id)).toEqual({
      id: created.id,
      accountId: acme.accountId,
      name: 'Postgres port',
      checkType: 'TCP',
      shouldFail: true,
      runtimeId: null,
      degradedResponseTime: 3000,
      maxResponseTime: 5000,
      request: {
        hostname: 'db.example.test',
        port: 5432,
        data: null,
        ipFamily: 'IPv6',
        assertions: [{ source: 'RESPONSE_DATA', comparison: 'CONTAINS', property: '', target: '+OK', regex: null }],
      },
    });
  });

  describe('TLS (Outpost extension)', () => {
    const tlsRequest = {
      ...tcpMinimal.request,
      port: 465,
      tls: true,
      tlsServerName: 'smtp.example.test',
      skipSSL: true,
    };

    it('stores tls, tlsServerName and skipSSL, reads them back and puts them in the job', async ({
      api,
      acme,
      createCheck,
    }) => {
      const created = await createCheck('/v1/checks/tcp', { ...tcpMinimal, request: tlsRequest });
      expect(created.request).toEqual({ ...tlsRequest, data: null, ipFamily: 'IPv4', assertions: [] });
      expect(json<CheckView>(await api.request(acme, 'GET', `/v1/checks/${created.id}`)).request).toEqual(
        created.request,
      );
      expect(await jobOf(api, acme, created.id)).toMatchObject({
        request: { tls: true, tlsServerName: 'smtp.example.test', skipSSL: true },
      });
    });

    it('leaves a check without them as the reference writes it, and its job without TLS', async ({
      api,
      acme,
      createCheck,
    }) => {
      const created = await createCheck('/v1/checks/tcp', tcpMinimal);
      expect(created.request).not.toHaveProperty('tls');
      expect(await jobRequestOf(api, acme, created.id)).not.toHaveProperty('tls');
    });

    it.for<[object, string]>([
      [{ tls: 'yes' }, 'body/request/tls must be boolean'],
      [{ tls: true, skipSSL: 'maybe' }, 'body/request/skipSSL must be boolean'],
      [{ tls: true, tlsServerName: 'not a host' }, 'body/request/tlsServerName must match pattern'],
      [
        { tls: true, tlsServerName: 'x'.repeat(254) },
        'body/request/tlsServerName must NOT have more than 253 characters',
      ],
      [{ tlsServerName: 'smtp.example.test' }, 'body/request/tlsServerName applies only when request.tls is true'],
      [{ tls: false, skipSSL: true }, 'body/request/skipSSL applies only when request.tls is true'],
    ])('answers 400 naming the field for request %j', async ([extra, message], { api, acme }) => {
      const request = { ...tcpMinimal.request, ...extra };
      expect(await refusalOf(api, acme, '/v1/checks/tcp', { ...tcpMinimal, request })).toContain(message);
    });

    it('checks the switches after a PUT merged them into the stored request', async ({ api, acme, createCheck }) => {
      const created = await createCheck('/v1/checks/tcp', { ...tcpMinimal, request: tlsRequest });
      const off = await api.request(acme, 'PUT', `/v1/checks/tcp/${created.id}`, {
        request: { port: 465, tls: false },
      });
      expect([off.statusCode, json<{ message: string }>(off).message]).toEqual([
        400,
        'body/request/tlsServerName applies only when request.tls is true',
      ]);
      const plain = await api.request(acme, 'PUT', `/v1/checks/tcp/${created.id}`, {
        request: { port: 465, tls: false, tlsServerName: null, skipSSL: false },
      });
      expect(plain.statusCode, plain.body).toBe(200);
      expect(await jobRequestOf(api, acme, created.id)).not.toHaveProperty('tls');
    });

    it("does not let another account change a check's TLS switches", async ({ api, acme, other, createCheck }) => {
      const created = await createCheck('/v1/checks/tcp', { ...tcpMinimal, request: tlsRequest });
      const res = await api.request(other, 'PUT', `/v1/checks/tcp/${created.id}`, {
        request: { port: 465, skipSSL: false },
      });
      expect(res.statusCode).toBe(404);
      expect(json<CheckView>(await api.request(acme, 'GET', `/v1/checks/${created.id}`)).request.skipSSL).toBe(true);
    });
  });
});

describe('DNS checks', () => {
  it('fills in the reference defaults (500/1000 ms, UDP, port 53)', async ({ createCheck }) => {
    await expectCreatedWithDefaults(createCheck, '/v1/checks/dns', dnsMinimal, {
      name: 'Apex A',
      checkType: 'DNS',
      degradedResponseTime: 500,
      maxResponseTime: 1000,
      request: { query: 'example.test', recordType: 'A', port: 53, protocol: 'UDP', assertions: [] },
    });
  });

  it('accepts PTR, SRV and CAA besides the reference types, and a name server', async ({ api, acme, createCheck }) => {
    for (const recordType of ['A', 'AAAA', 'CNAME', 'MX', 'TXT', 'SOA', 'NS', 'HTTPS', 'PTR', 'SRV', 'CAA']) {
      await createCheck('/v1/checks/dns', { name: recordType, request: { query: 'example.test', recordType } });
    }
    const srv = {
      query: '_sip._tcp.example.test',
      recordType: 'SRV',
      nameServer: '127.0.0.1',
      port: 5353,
      protocol: 'TCP',
    };
    const created = await createCheck('/v1/checks/dns', {
      name: 'ns',
      request: {
        ...srv,
        assertions: [{ source: 'JSON_ANSWER', comparison: 'HAS_KEY', property: '$.answers[0]', target: 'data' }],
      },
    });
    // The job carries the request as created, each assertion with its regex filled in.
    expect(await jobOf(api, acme, created.id)).toMatchObject({
      checkType: 'DNS',
      degradedResponseTime: 500,
      maxResponseTime: 1000,
      request: {
        ...srv,
        assertions: [
          { source: 'JSON_ANSWER', comparison: 'HAS_KEY', property: '$.answers[0]', target: 'data', regex: null },
        ],
      },
    });
  });

  it.for<[object, string]>([
    [{ name: 'x', request: { recordType: 'A' } }, 'body/request/query is required'],
    [
      { name: 'x', request: { query: 'a.test', recordType: 'SPF' } },
      'body/request/recordType must be one of A, AAAA, CNAME, MX, TXT, SOA, NS, HTTPS, PTR, SRV, CAA',
    ],
    [
      { name: 'x', request: { query: 'a.test', recordType: 'A', protocol: 'DOH' } },
      'body/request/protocol must be one of UDP, TCP',
    ],
    [{ name: 'x', request: { query: 'a.test', recordType: 'A', port: 0 } }, 'body/request/port must be >= 1'],
    [
      { name: 'x', request: { query: 'x'.repeat(101), recordType: 'A' } },
      'body/request/query must NOT have more than 100 characters',
    ],
    [
      { name: 'x', request: { ...dnsMinimal.request, assertions: [{ source: 'LATENCY', comparison: 'EQUALS' }] } },
      'body/request/assertions/0/source must be one of RESPONSE_TIME, RESPONSE_CODE, TEXT_ANSWER, JSON_ANSWER',
    ],
    [{ ...dnsMinimal, degradedResponseTime: 5001 }, 'body/degradedResponseTime must be <= 5000'],
  ])('answers 400 naming the field for %j', ([body, message], { api, acme }) =>
    expectBadRequest(api, acme, '/v1/checks/dns', body, message),
  );

  describe('query switches (Outpost extension)', () => {
    it('stores recursionDesired, edns and dnssecOk and puts them in the job; dnssecOk implies EDNS', async ({
      api,
      acme,
      createCheck,
    }) => {
      const request = { ...dnsMinimal.request, recursionDesired: false, dnssecOk: true };
      const created = await createCheck('/v1/checks/dns', { ...dnsMinimal, request });
      expect(created.request).toMatchObject({ recursionDesired: false, dnssecOk: true });
      expect(await jobRequestOf(api, acme, created.id)).toMatchObject({
        recursionDesired: false,
        edns: true,
        dnssecOk: true,
      });
    });

    it('gives a check without them RD on and no EDNS in its job', async ({ api, acme, createCheck }) => {
      const created = await createCheck('/v1/checks/dns', dnsMinimal);
      expect(created.request).not.toHaveProperty('recursionDesired');
      expect(await jobRequestOf(api, acme, created.id)).toMatchObject({
        recursionDesired: true,
        edns: false,
        dnssecOk: false,
      });
    });

    it('PUT switches one of them and keeps the rest of the request', async ({ api, acme, createCheck }) => {
      const created = await createCheck('/v1/checks/dns', {
        ...dnsMinimal,
        request: { ...dnsMinimal.request, edns: true },
      });
      const res = await api.request(acme, 'PUT', `/v1/checks/dns/${created.id}`, {
        request: { recursionDesired: false },
      });
      expect(res.statusCode, res.body).toBe(200);
      expect(json<CheckView>(res).request).toMatchObject({
        query: 'example.test',
        edns: true,
        recursionDesired: false,
      });
    });

    it.for<[object, string]>([
      [{ recursionDesired: 'no' }, 'body/request/recursionDesired must be boolean'],
      [{ edns: 'sometimes' }, 'body/request/edns must be boolean'],
      [{ dnssecOk: { on: true } }, 'body/request/dnssecOk must be boolean'],
    ])('answers 400 naming the field for request %j', async ([extra, message], { api, acme }) => {
      const request = { ...dnsMinimal.request, ...extra };
      expect(await refusalOf(api, acme, '/v1/checks/dns', { ...dnsMinimal, request })).toBe(message);
    });
  });
});

describe('ICMP checks', () => {
  it('fills in the reference defaults (pingCount 10, loss 10/20 %, 10000/20000 ms)', async ({
    api,
    acme,
    createCheck,
  }) => {
    const created = await expectCreatedWithDefaults(createCheck, '/v1/checks/icmp', icmpMinimal, {
      name: 'Gateway ping',
      checkType: 'ICMP',
      degradedResponseTime: 10000,
      maxResponseTime: 20000,
      degradedPacketLossThreshold: 10,
      maxPacketLossThreshold: 20,
      request: { hostname: 'gw.example.test', ipFamily: 'IPv4', pingCount: 10, assertions: [] },
    });
    expect(await jobOf(api, acme, created.id)).toMatchObject({
      checkType: 'ICMP',
      degradedPacketLossThreshold: 10,
      maxPacketLossThreshold: 20,
      request: { hostname: 'gw.example.test', ipFamily: 'IPv4', pingCount: 10, assertions: [] },
    });
  });

  it.for<[object, string]>([
    [{ name: 'x', request: {} }, 'body/request/hostname is required'],
    [{ name: 'x', request: { hostname: 'h', pingCount: 0 } }, 'body/request/pingCount must be >= 1'],
    [{ name: 'x', request: { hostname: 'h', pingCount: 51 } }, 'body/request/pingCount must be <= 50'],
    [{ ...icmpMinimal, degradedPacketLossThreshold: 0 }, 'body/degradedPacketLossThreshold must be > 0'],
    [{ ...icmpMinimal, maxPacketLossThreshold: 101 }, 'body/maxPacketLossThreshold must be <= 100'],
    [
      { name: 'x', request: { hostname: 'h', assertions: [{ source: 'LATENCY', comparison: 'HAS_KEY' }] } },
      'body/request/assertions/0/comparison must be one of EQUALS, NOT_EQUALS, IS_EMPTY, NOT_EMPTY, GREATER_THAN, LESS_THAN, CONTAINS, NOT_CONTAINS, IS_NULL, NOT_NULL',
    ],
  ])('answers 400 naming the field for %j', ([body, message], { api, acme }) =>
    expectBadRequest(api, acme, '/v1/checks/icmp', body, message),
  );

  it('PUT sets pingCount and thresholds', async ({ api, acme, createCheck }) => {
    const created = await createCheck('/v1/checks/icmp', icmpMinimal);
    const res = await api.request(acme, 'PUT', `/v1/checks/icmp/${created.id}`, {
      request: { pingCount: 3 },
      maxPacketLossThreshold: 50,
    });
    expect(res.statusCode, res.body).toBe(200);
    expect(json<CheckView>(res)).toMatchObject({
      maxPacketLossThreshold: 50,
      request: { hostname: 'gw.example.test', pingCount: 3 },
    });
  });
});

describe('all types together', () => {
  /** One minimal check of each type, created as Acme. */
  const oneOfEachType = async (createCheck: CreateCheck) => ({
    tcp: await createCheck('/v1/checks/tcp', tcpMinimal),
    dns: await createCheck('/v1/checks/dns', dnsMinimal),
    icmp: await createCheck('/v1/checks/icmp', icmpMinimal),
  });

  it('GET /v1/checks lists every type in its own shape, filters by checkType, DELETE removes any', async ({
    api,
    acme,
    createCheck,
  }) => {
    const { tcp, dns, icmp } = await oneOfEachType(createCheck);
    const apiCheck = await createCheck('/v1/checks/api', {
      name: 'Home',
      request: { method: 'GET', url: 'https://example.test/' },
    });
    const list = json<CheckView[]>(await api.request(acme, 'GET', '/v1/checks?limit=100'));
    const byId = new Map(list.map((c) => [c.id, c]));
    expect(byId.get(tcp.id)).toEqual(tcp);
    expect(byId.get(dns.id)).toEqual(dns);
    expect(byId.get(icmp.id)).toEqual(icmp);
    expect(byId.get(apiCheck.id)).toEqual(apiCheck);

    const onlyDns = json<CheckView[]>(await api.request(acme, 'GET', '/v1/checks?checkType=DNS'));
    expect(onlyDns.map((c) => c.id)).toEqual([dns.id]);

    for (const c of [tcp, dns, icmp]) {
      expect((await api.request(acme, 'DELETE', `/v1/checks/${c.id}`)).statusCode).toBe(204);
      expect((await api.request(acme, 'GET', `/v1/checks/${c.id}`)).statusCode).toBe(404);
    }
    expect(first(json<CheckView[]>(await api.request(acme, 'GET', '/v1/checks'))).id).toBe(apiCheck.id);
  });

  it("answers 404 for another account's check and for a check of another type under a type's path", async ({
    api,
    acme,
    other,
    createCheck,
  }) => {
    const { tcp, dns, icmp } = await oneOfEachType(createCheck);
    await expectChecksHiddenFrom(api, other, [
      ['tcp', tcp.id],
      ['dns', dns.id],
      ['icmp', icmp.id],
    ]);
    const wrongType = await api.request(acme, 'PUT', `/v1/checks/dns/${tcp.id}`, { name: 'x' });
    expect(wrongType.statusCode).toBe(404);
    expect(json(await api.request(other, 'GET', '/v1/checks'))).toEqual([]);
    expect(json<CheckView>(await api.request(acme, 'GET', `/v1/checks/${tcp.id}`)).name).toBe('Postgres port');
  });
});
