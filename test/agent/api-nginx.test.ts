/**
 * The API check runner against a server no one here wrote: Debian's nginx, started by this test as
 * its own process (prefix, pid, logs and temp files in a temp dir) on loopback, over HTTP and HTTPS
 * with a self-signed certificate the test makes. A slow upstream is a node server behind
 * proxy_pass (nginx cannot delay by itself); a slow download is nginx's limit_rate.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import type net from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { apiCheckRunner } from '../../src/agent/checks/api.ts';
import type { ApiCheckDefinition, ApiRequest, Assertion } from '../../src/shared/checks/types.ts';
import { freePorts } from '../support/loopback-port.ts';
import { apiCheck, context, makeSelfSigned } from './api-fixtures.ts';
import { runNginx } from './tcp-servers.ts';

const JSON_DOC = '{"name":"outpost","items":[1,2,3],"nested":{"ok":true,"count":7}}';
const SLOW_UPSTREAM_MS = 300;
// nginx sends one second's worth at once (limit_rate allows rate * (elapsed + 1) bytes), so 16 KiB at
// 8 KiB/s arrives as 8 KiB now and the rest about a second later.
const THROTTLED_BYTES = 16 * 1024;
const THROTTLE_RATE = '8k';

let dir: string;
let nginx: { stop(): Promise<void> } | undefined;
let upstream: http.Server;
let httpOrigin: string;
let httpsOrigin: string;

beforeAll(async () => {
  // CI installs nginx (.ci/run); without it this must fail, not skip (runNginx throws).
  dir = mkdtempSync(join(tmpdir(), 'outpost-nginx-'));
  const cert = makeSelfSigned();
  writeFileSync(join(dir, 'cert.pem'), cert.cert);
  writeFileSync(join(dir, 'key.pem'), cert.key);
  writeFileSync(join(dir, 'throttled.bin'), Buffer.alloc(THROTTLED_BYTES, 0x61));

  upstream = http.createServer((req, res) => {
    setTimeout(
      () =>
        res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ slow: true, path: req.url })),
      SLOW_UPSTREAM_MS,
    );
  });
  await new Promise<void>((r) => upstream.listen(0, '127.0.0.1', r));
  const upstreamPort = (upstream.address() as net.AddressInfo).port;

  const [httpPort, httpsPort] = (await freePorts(2)) as [number, number];
  httpOrigin = `http://127.0.0.1:${httpPort}`;
  httpsOrigin = `https://127.0.0.1:${httpsPort}`;
  const locations = `
      location = /json { default_type application/json; return 200 '${JSON_DOC}'; }
      location = /headers { add_header X-Outpost-Test "abc-123" always; add_header Cache-Control "no-store" always; default_type text/plain; return 200 "hello from nginx\\n"; }
      location = /redirect { return 302 /json; }
      location = /redirect-chain { return 301 /redirect; }
      location = /missing { return 404; }
      location = /throttled.bin { root ${dir}; limit_rate ${THROTTLE_RATE}; }
      location /slow { proxy_pass http://127.0.0.1:${upstreamPort}; }
      location = /conn { default_type text/plain; return 200 "$connection"; }`;
  const servers = [
    `server { listen 127.0.0.1:${httpPort}; sendfile off; ${locations} }`,
    `server {
        listen 127.0.0.1:${httpsPort} ssl;
        sendfile off;
        ssl_certificate ${dir}/cert.pem;
        ssl_certificate_key ${dir}/key.pem;
        ${locations}
      }`,
  ];
  nginx = await runNginx(dir, servers, [httpPort, httpsPort]);
});

afterAll(async () => {
  await nginx?.stop();
  await new Promise<void>((r) => (upstream ? upstream.close(() => r()) : r()));
  // nginx's stop removes it too; this is for an nginx that never started.
  if (dir) rmSync(dir, { recursive: true, force: true });
});

/** Runs an API check of `request` with a fresh context. */
const run = (request: Partial<ApiRequest> & { url: string }, extra?: Partial<ApiCheckDefinition>) =>
  apiCheckRunner.run(apiCheck(request, extra), context());
const a = (
  source: Assertion['source'],
  comparison: Assertion['comparison'],
  property: string,
  target: string,
  regex?: string,
): Assertion => ({
  source,
  comparison,
  property,
  target,
  ...(regex ? { regex } : {}),
});

describe('HTTP through nginx', () => {
  it('status and JSON_BODY assertions on a JSON location', async () => {
    const r = await run({
      url: `${httpOrigin}/json`,
      assertions: [
        a('STATUS_CODE', 'EQUALS', '', '200'),
        a('JSON_BODY', 'EQUALS', '$.name', 'outpost'),
        a('JSON_BODY', 'HAS_VALUE', '$.items', '2'),
        a('JSON_BODY', 'GREATER_THAN', '$.nested.count', '5'),
        a('JSON_BODY', 'HAS_KEY', '$.nested', 'ok'),
        a('HEADERS', 'CONTAINS', 'content-type', 'application/json'),
      ],
    });
    expect(r.error).toBeNull();
    expect(r.apiCheckResult?.assertions.map((x) => [x.actual, x.passed])).toEqual([
      [200, true],
      ['outpost', true],
      [[1, 2, 3], true],
      [7, true],
      [{ ok: true, count: 7 }, true],
      ['application/json', true],
    ]);
    expect(r.apiCheckResult?.response?.body).toBe(JSON_DOC);
  });

  it('a failing JSON_BODY assertion fails the run with the actual value', async () => {
    const r = await run({ url: `${httpOrigin}/json`, assertions: [a('JSON_BODY', 'EQUALS', '$.nested.count', '8')] });
    expect(r.hasFailures).toBe(true);
    expect(r.error).toBe('Assertion failed: JSON_BODY $.nested.count EQUALS "8" (actual: 7)');
  });

  it('HEADERS (with a regex) and TEXT_BODY', async () => {
    const r = await run({
      url: `${httpOrigin}/headers`,
      assertions: [
        a('HEADERS', 'EQUALS', 'x-outpost-test', 'abc-123'),
        a('HEADERS', 'EQUALS', 'x-outpost-test', '123', '-(\\d+)$'),
        a('HEADERS', 'CONTAINS', 'server', 'nginx'),
        a('HEADERS', 'HAS_KEY', '', 'cache-control'),
        a('HEADERS', 'NOT_HAS_KEY', '', 'x-powered-by'),
        a('TEXT_BODY', 'CONTAINS', '', 'hello from nginx'),
        a('TEXT_BODY', 'NOT_CONTAINS', '', 'apache'),
      ],
    });
    expect(r.apiCheckResult?.assertions.filter((x) => !x.passed)).toEqual([]);
    expect(r.apiCheckResult?.response?.headers?.server).toMatch(/^nginx/);
  });

  it('a 404 fails by its status, passes with shouldFail, and still fails a STATUS_CODE assertion then', async () => {
    const none = await run({ url: `${httpOrigin}/missing` });
    expect(none.hasFailures).toBe(true);
    expect(none.error).toBe('HTTP 404 Not Found: a 4xx or 5xx status fails the check unless it has shouldFail');
    expect(none.apiCheckResult?.response?.status).toBe(404);
    const expected = await run(
      { url: `${httpOrigin}/missing`, assertions: [a('STATUS_CODE', 'EQUALS', '', '404')] },
      { shouldFail: true },
    );
    expect(expected.hasFailures).toBe(false);
    const asserted = await run(
      { url: `${httpOrigin}/missing`, assertions: [a('STATUS_CODE', 'LESS_THAN', '', '400')] },
      { shouldFail: true },
    );
    expect(asserted.hasFailures).toBe(true);
    expect(asserted.error).toBe('Assertion failed: STATUS_CODE LESS_THAN "400" (actual: 404)');
  });

  it('redirects: followed to the end, or reported as they are', async () => {
    const followed = await run({ url: `${httpOrigin}/redirect-chain`, followRedirects: true });
    expect(followed.apiCheckResult?.response?.status).toBe(200);
    expect(followed.apiCheckResult?.response?.body).toBe(JSON_DOC);
    expect(followed.details?.finalUrl).toBe(`${httpOrigin}/json`);
    expect(followed.details?.redirects).toEqual([
      { url: `${httpOrigin}/redirect-chain`, status: 301 },
      { url: `${httpOrigin}/redirect`, status: 302 },
    ]);
    const notFollowed = await run({ url: `${httpOrigin}/redirect`, followRedirects: false });
    expect(notFollowed.apiCheckResult?.response?.status).toBe(302);
    expect(notFollowed.apiCheckResult?.response?.headers?.location).toBe(`${httpOrigin}/json`);
  });

  it('every run opens its own connection (nginx $connection differs)', async () => {
    const one = await run({ url: `${httpOrigin}/conn` });
    const two = await run({ url: `${httpOrigin}/conn` });
    expect(Number(one.apiCheckResult?.response?.body)).toBeGreaterThan(0);
    expect(two.apiCheckResult?.response?.body).not.toBe(one.apiCheckResult?.response?.body);
  });
});

describe('timing phases against nginx', () => {
  it('a slow upstream shows in firstByte, a throttled body in download; phases add up to total', async () => {
    const slow = await run({ url: `${httpOrigin}/slow/x` });
    expect(slow.apiCheckResult?.response?.body).toBe('{"slow":true,"path":"/slow/x"}');
    const p = slow.apiCheckResult!.response!.timingPhases!;
    expect(p.firstByte).toBeGreaterThanOrEqual(SLOW_UPSTREAM_MS - 5);
    expect(p.dns).toBe(0); // an IP literal
    expect(p.tcp).toBeGreaterThan(0);
    expect(p.tls).toBe(0);

    const throttled = await run({ url: `${httpOrigin}/throttled.bin` });
    const q = throttled.apiCheckResult!.response!.timingPhases!;
    expect(throttled.details?.bodyBytes).toBe(THROTTLED_BYTES);
    expect(q.download).toBeGreaterThan(500);
    const sum = q.wait + q.dns + q.tcp + q.tls + q.firstByte + q.download;
    expect(Math.abs(sum - q.total)).toBeLessThan(0.01);
    expect(throttled.responseTime).toBe(q.total);
  });
});

describe('HTTPS through nginx with a self-signed certificate', () => {
  it('skipSSL off: a TLS error naming the self-signed certificate, with the certificate details', async () => {
    const r = await run({ url: `${httpsOrigin}/json`, skipSSL: false });
    expect(r.hasFailures).toBe(true);
    expect(r.error).toBe('TLS error: self-signed certificate (DEPTH_ZERO_SELF_SIGNED_CERT)');
    expect(r.apiCheckResult?.response).toBeNull();
    expect(r.details?.tls).toMatchObject({ subjectCN: 'localhost', authorized: false });
    // A certificate error is not a network failure: no traceroute.
    expect(r.details?.traceroute).toBeUndefined();
  });

  it('skipSSL on: the response, TLS details (subject, issuer, expiry, days left) and a tls phase', async () => {
    const r = await run({
      url: `${httpsOrigin}/json`,
      skipSSL: true,
      assertions: [a('JSON_BODY', 'EQUALS', '$.nested.ok', 'true')],
    });
    expect(r.error).toBeNull();
    const res = r.apiCheckResult?.response;
    expect(res?.status).toBe(200);
    expect(res?.tls).toMatchObject({
      subjectCN: 'localhost',
      issuerCN: 'localhost',
      authorized: false,
      authorizationError: 'DEPTH_ZERO_SELF_SIGNED_CERT',
    });
    expect(res?.tls?.daysRemaining).toBeGreaterThanOrEqual(29);
    expect(res?.tls?.daysRemaining).toBeLessThanOrEqual(30);
    expect(Date.parse(res?.tls?.validTo ?? '')).toBeGreaterThan(Date.now());
    expect(res?.tls?.protocol).toMatch(/^TLSv1\.[23]$/);
    expect(res?.timingPhases?.tls).toBeGreaterThan(0);
    expect(res?.timingPhases?.tcp).toBeGreaterThan(0);
  });

  it('redirects over HTTPS keep TLS on every hop', async () => {
    const r = await run({ url: `${httpsOrigin}/redirect`, skipSSL: true });
    expect(r.apiCheckResult?.response?.status).toBe(200);
    expect(r.details?.finalUrl).toBe(`${httpsOrigin}/json`);
  });
});
