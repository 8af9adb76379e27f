/**
 * API checks offer h2 and HTTP/1.1 by ALPN, as browsers do, and record the protocol the server chose
 * in `response.httpVersion`: against real node:http2 and node:https servers on loopback.
 */
import http2 from 'node:http2';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { apiCheckRunner } from '../../src/agent/checks/api.ts';
import type { Assertion } from '../../src/shared/checks/types.ts';
import { apiCheck, context, makeSelfSigned, type SelfSigned, startServer, type TestServer } from './api-fixtures.ts';

let cert: SelfSigned;
let h2only: http2.Http2SecureServer;
let h2origin: string;
let h1secure: TestServer;
let plain: TestServer;

beforeAll(async () => {
  cert = makeSelfSigned();
  // allowHTTP1 false: a client that cannot speak h2 gets "no application protocol".
  h2only = http2.createSecureServer({ key: cert.key, cert: cert.cert, allowHTTP1: false }, (req, res) => {
    if (req.url === '/redirect') {
      res.writeHead(302, { location: '/json' });
      res.end();
      return;
    }
    res.setHeader('content-type', 'application/json');
    res.setHeader('x-served-by', 'h2');
    res.end(JSON.stringify({ over: req.httpVersion, path: req.url }));
  });
  await new Promise<void>((r) => h2only.listen(0, '127.0.0.1', r));
  h2origin = `https://127.0.0.1:${(h2only.address() as AddressInfo).port}`;
  h1secure = await startServer({ tls: cert });
  plain = await startServer();
});
afterAll(async () => {
  await new Promise((r) => h2only?.close(r));
  await h1secure?.close();
  await plain?.close();
});

describe('HTTP/2 by ALPN', () => {
  it('a server that speaks only h2 is checked over h2, and the result says so', async () => {
    const assertions: Assertion[] = [
      { source: 'STATUS_CODE', comparison: 'EQUALS', property: '', target: '200' },
      { source: 'JSON_BODY', comparison: 'EQUALS', property: '$.over', target: '2.0' },
      { source: 'HEADERS', comparison: 'EQUALS', property: 'x-served-by', target: 'h2' },
    ];
    const r = await apiCheckRunner.run(apiCheck({ url: `${h2origin}/json`, skipSSL: true, assertions }), context());
    expect(r.error).toBeNull();
    expect(r.hasFailures).toBe(false);
    const res = r.apiCheckResult?.response;
    expect(res?.status).toBe(200);
    expect(res?.statusText).toBe('OK');
    expect(res?.httpVersion).toBe('2');
    expect(JSON.parse(res?.body ?? 'null')).toEqual({ over: '2.0', path: '/json' });
    expect(res?.tls?.subjectCN).toBe('localhost');
    expect(res?.timingPhases?.tls).toBeGreaterThan(0);
    expect(res?.timingPhases?.firstByte).toBeGreaterThan(0);
  });

  it('redirects are followed over h2 too', async () => {
    const r = await apiCheckRunner.run(apiCheck({ url: `${h2origin}/redirect`, skipSSL: true }), context());
    expect(r.apiCheckResult?.response?.status).toBe(200);
    expect(r.apiCheckResult?.response?.httpVersion).toBe('2');
    expect(r.details?.redirects).toEqual([{ url: `${h2origin}/redirect`, status: 302 }]);
  });

  it('an https server without h2 is checked over HTTP/1.1', async () => {
    const r = await apiCheckRunner.run(apiCheck({ url: `${h1secure.origin}/text`, skipSSL: true }), context());
    expect(r.apiCheckResult?.response?.status).toBe(200);
    expect(r.apiCheckResult?.response?.httpVersion).toBe('1.1');
  });

  it('plain http is HTTP/1.1', async () => {
    const r = await apiCheckRunner.run(apiCheck({ url: `${plain.origin}/text` }), context());
    expect(r.apiCheckResult?.response?.httpVersion).toBe('1.1');
  });
});
