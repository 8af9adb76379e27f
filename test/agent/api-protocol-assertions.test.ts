/**
 * Outpost's protocol assertion sources of API checks — HTTP_VERSION, TLS_VERSION and
 * SSL_CERTIFICATE_DAYS_REMAINING — evaluated on what the result records, against real loopback
 * servers: node:https (a 30-day self-signed certificate), node:https limited to TLS 1.2, node:http2
 * with allowHTTP1, and plain node:http.
 */
import http2 from 'node:http2';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { apiCheckRunner } from '../../src/agent/checks/api.ts';
import { evaluateAssertions } from '../../src/agent/checks/api/assertions.ts';
import type { Assertion, AssertionComparison, AssertionSource } from '../../src/shared/checks/types.ts';
import { apiCheck, context, makeSelfSigned, type SelfSigned, startServer, type TestServer } from './api-fixtures.ts';

let cert: SelfSigned;
let h1secure: TestServer;
let plain: TestServer;
let tls12: https.Server;
let tls12origin: string;
let h2: http2.Http2SecureServer;
let h2origin: string;

beforeAll(async () => {
  cert = makeSelfSigned();
  h1secure = await startServer({ tls: cert });
  plain = await startServer();
  tls12 = https.createServer({ key: cert.key, cert: cert.cert, maxVersion: 'TLSv1.2' }, (_req, res) => res.end('ok'));
  await new Promise<void>((r) => tls12.listen(0, '127.0.0.1', r));
  tls12origin = `https://127.0.0.1:${(tls12.address() as AddressInfo).port}`;
  h2 = http2.createSecureServer({ key: cert.key, cert: cert.cert, allowHTTP1: true }, (_req, res) => res.end('ok'));
  await new Promise<void>((r) => h2.listen(0, '127.0.0.1', r));
  h2origin = `https://127.0.0.1:${(h2.address() as AddressInfo).port}`;
});
afterAll(async () => {
  await h1secure?.close();
  await plain?.close();
  tls12?.closeAllConnections();
  await new Promise((r) => tls12?.close(r));
  await new Promise((r) => h2?.close(r));
});

const a = (source: AssertionSource, comparison: AssertionComparison, target = ''): Assertion => ({
  source,
  comparison,
  property: '',
  target,
});

async function run(url: string, assertions: Assertion[]) {
  const r = await apiCheckRunner.run(apiCheck({ url, skipSSL: true, assertions }), context());
  return { r, results: r.apiCheckResult?.assertions ?? [] };
}

describe('HTTP_VERSION', () => {
  it('is 2 when the server chooses h2, with 2, 2.0 and HTTP/2 as the same target', async () => {
    const { r, results } = await run(`${h2origin}/`, [
      a('HTTP_VERSION', 'EQUALS', '2'),
      a('HTTP_VERSION', 'EQUALS', 'HTTP/2'),
      a('HTTP_VERSION', 'EQUALS', '2.0'),
      a('HTTP_VERSION', 'GREATER_THAN', '1.1'),
    ]);
    expect(r.apiCheckResult?.response?.httpVersion).toBe('2');
    expect(r.error).toBeNull();
    expect(results.map((x) => [x.actual, x.passed])).toEqual(Array(4).fill(['2', true]));
  });

  it('is 1.1 over HTTP/1.1, and an h2 expectation fails with the actual value', async () => {
    const { r, results } = await run(`${h1secure.origin}/json`, [
      a('HTTP_VERSION', 'EQUALS', '1.1'),
      a('HTTP_VERSION', 'EQUALS', '2'),
    ]);
    expect(results.map((x) => x.passed)).toEqual([true, false]);
    expect(r.error).toBe('Assertion failed: HTTP_VERSION EQUALS "2" (actual: "1.1")');
  });
});

describe('TLS_VERSION', () => {
  it('compares versions in order, in the reference, Node and bare spellings', async () => {
    const { r, results } = await run(`${h1secure.origin}/json`, [
      a('TLS_VERSION', 'EQUALS', 'TLS1.3'),
      a('TLS_VERSION', 'EQUALS', 'TLSv1.3'),
      a('TLS_VERSION', 'GREATER_THAN', 'TLS1.2'),
      a('TLS_VERSION', 'NOT_NULL'),
    ]);
    expect(r.apiCheckResult?.response?.tls?.protocol).toBe('TLSv1.3');
    expect(r.error).toBeNull();
    expect(results.map((x) => [x.actual, x.passed])).toEqual(Array(4).fill(['TLSv1.3', true]));
  });

  it('a server that stops at TLS 1.2 fails a GREATER_THAN TLS1.2 assertion', async () => {
    const { r, results } = await run(`${tls12origin}/`, [
      a('TLS_VERSION', 'LESS_THAN', '1.3'),
      a('TLS_VERSION', 'GREATER_THAN', 'TLS1.2'),
    ]);
    expect(results.map((x) => [x.actual, x.passed])).toEqual([
      ['TLSv1.2', true],
      ['TLSv1.2', false],
    ]);
    expect(r.error).toBe('Assertion failed: TLS_VERSION GREATER_THAN "TLS1.2" (actual: "TLSv1.2")');
  });

  it('is null over plain http: IS_NULL passes, a comparison fails saying why', async () => {
    const { r, results } = await run(`${plain.origin}/json`, [
      a('TLS_VERSION', 'IS_NULL'),
      a('TLS_VERSION', 'GREATER_THAN', 'TLS1.2'),
    ]);
    expect(results.map((x) => x.passed)).toEqual([true, false]);
    expect(results[1]?.error).toBe('the response came over plain HTTP: there is no TLS session or certificate');
    expect(r.hasFailures).toBe(true);
  });
});

describe('SSL_CERTIFICATE_DAYS_REMAINING', () => {
  it("is the certificate's whole days remaining (a 30-day certificate: 29)", async () => {
    const { r, results } = await run(`${h1secure.origin}/json`, [
      a('SSL_CERTIFICATE_DAYS_REMAINING', 'GREATER_THAN', '14'),
      a('SSL_CERTIFICATE_DAYS_REMAINING', 'LESS_THAN', '31'),
      a('SSL_CERTIFICATE_DAYS_REMAINING', 'GREATER_THAN', '60'),
    ]);
    const days = r.apiCheckResult?.response?.tls?.daysRemaining;
    expect(days).toBe(29);
    expect(results.map((x) => [x.actual, x.passed])).toEqual([
      [29, true],
      [29, true],
      [29, false],
    ]);
    expect(r.error).toBe('Assertion failed: SSL_CERTIFICATE_DAYS_REMAINING GREATER_THAN "60" (actual: 29)');
  });

  it('works over h2 too, and is null over plain http', async () => {
    const secure = await run(`${h2origin}/`, [a('SSL_CERTIFICATE_DAYS_REMAINING', 'EQUALS', '29')]);
    expect(secure.results[0]?.passed).toBe(true);
    const { results } = await run(`${plain.origin}/json`, [
      a('SSL_CERTIFICATE_DAYS_REMAINING', 'IS_NULL'),
      a('SSL_CERTIFICATE_DAYS_REMAINING', 'LESS_THAN', '7'),
    ]);
    expect(results.map((x) => [x.actual, x.passed])).toEqual([
      [null, true],
      [null, false],
    ]);
  });

  it('after a redirect from https to http there is no certificate', async () => {
    const to = encodeURIComponent(`${plain.origin}/json`);
    const { r, results } = await run(`${h1secure.origin}/goto/302?to=${to}`, [
      a('SSL_CERTIFICATE_DAYS_REMAINING', 'IS_NULL'),
    ]);
    expect(r.details?.finalUrl).toBe(`${plain.origin}/json`);
    expect(r.apiCheckResult?.response?.tls).toBeUndefined();
    expect(results[0]?.passed).toBe(true);
  });
});

describe('the engine', () => {
  it('ignores property and regex for the protocol sources, and never throws on odd targets', () => {
    const res = {
      status: 200,
      headers: {},
      body: '',
      responseTime: 1,
      httpVersion: '1.1',
      tls: { protocol: 'TLSv1', daysRemaining: -3 },
    };
    const results = evaluateAssertions(
      [
        { ...a('HTTP_VERSION', 'EQUALS', '1.1'), property: 'x', regex: '(9)' },
        a('TLS_VERSION', 'EQUALS', 'TLS1.0'),
        a('TLS_VERSION', 'EQUALS', 'SSLv3'),
        a('SSL_CERTIFICATE_DAYS_REMAINING', 'LESS_THAN', '0'),
      ],
      res,
    );
    expect(results.map((x) => x.passed)).toEqual([true, true, false, true]);
    expect(results[2]?.error).toBe('TLS_VERSION needs a version target (TLS1.2, TLSv1.3, 1.2), got "SSLv3"');
  });
});
