/**
 * The API check runner against real servers on loopback: request building, redirects, TLS, errors,
 * limits, cancellation, timings and connection handling.
 */
import net from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { apiCheckRunner, RESPONSE_BODY_CAP_BYTES } from '../../src/agent/checks/api.ts';
import { Scrubber } from '../../src/agent/scrub/index.ts';
import type { Assertion } from '../../src/shared/checks/types.ts';
import { apiCheck, context, makeSelfSigned, type SelfSigned, startServer, type TestServer } from './api-fixtures.ts';

let plain: TestServer;
let secure: TestServer;
let cert: SelfSigned;

beforeAll(async () => {
  cert = makeSelfSigned();
  plain = await startServer();
  secure = await startServer({ tls: cert });
});
afterAll(async () => {
  await plain?.close();
  await secure?.close();
});

const run = (...args: Parameters<typeof apiCheckRunner.run>) => apiCheckRunner.run(...args);

function echoed(result: Awaited<ReturnType<typeof run>>): {
  method: string;
  url: string;
  headers: Record<string, string>;
  body: string;
} {
  return JSON.parse(result.apiCheckResult?.response?.body ?? 'null');
}

describe('request', () => {
  it('GET: status, statusText, lower-case headers, recorded request', async () => {
    const r = await run(
      apiCheck({ url: `${plain.origin}/text`, headers: [{ key: 'X-Trace', value: 'abc' }] }),
      context(),
    );
    expect(r.hasFailures).toBe(false);
    expect(r.hasErrors).toBe(false);
    expect(r.error).toBeNull();
    const res = r.apiCheckResult?.response;
    expect(res?.status).toBe(200);
    expect(res?.statusText).toBe('OK');
    expect(res?.body).toBe('Hello, Outpost! build 42 ok');
    expect(res?.bodyTruncated).toBe(false);
    expect(res?.headers?.['x-request-id']).toBe('req-12345');
    // repeated headers are joined with ', '
    expect(res?.headers?.['set-cookie']).toBe('a=1, b=2');
    expect(r.apiCheckResult?.request).toMatchObject({
      method: 'GET',
      url: `${plain.origin}/text`,
      data: '',
      headers: { 'X-Trace': 'abc' },
    });
    expect(r.responseTime).toBe(res?.timingPhases?.total);
    expect(Date.parse(r.stoppedAt)).toBeGreaterThanOrEqual(Date.parse(r.startedAt));
  });

  it('query parameters are appended to the URL and recorded', async () => {
    const r = await run(
      apiCheck({
        url: `${plain.origin}/echo?a=1`,
        queryParameters: [
          { key: 'b', value: 'two words' },
          { key: 'a', value: '3' },
        ],
      }),
      context(),
    );
    expect(echoed(r).url).toBe('/echo?a=1&b=two+words&a=3');
    expect(r.apiCheckResult?.request.params).toEqual({ b: 'two words', a: '3' });
    expect(r.apiCheckResult?.request.url).toBe(`${plain.origin}/echo?a=1&b=two+words&a=3`);
  });

  const bodyCases = [
    { bodyType: 'JSON', body: '{"a":1}', contentType: 'application/json', arrives: '{"a":1}' },
    {
      bodyType: 'GRAPHQL',
      body: '{"query":"{ me { id } }"}',
      contentType: 'application/json',
      arrives: '{"query":"{ me { id } }"}',
    },
    { bodyType: 'FORM', body: 'a=1&b=x+y', contentType: 'application/x-www-form-urlencoded', arrives: 'a=1&b=x+y' },
    {
      bodyType: 'FORM',
      body: '{"a":"1","b":"x y"}',
      contentType: 'application/x-www-form-urlencoded',
      arrives: 'a=1&b=x+y',
    },
    { bodyType: 'RAW', body: 'just <raw> text', contentType: undefined, arrives: 'just <raw> text' },
    { bodyType: 'NONE', body: 'ignored', contentType: undefined, arrives: '' },
  ] as const;
  for (const c of bodyCases) {
    it(`POST with bodyType ${c.bodyType} (${c.body}) arrives as sent`, async () => {
      const r = await run(
        apiCheck({ url: `${plain.origin}/echo`, method: 'POST', bodyType: c.bodyType, body: c.body }),
        context(),
      );
      const e = echoed(r);
      expect(e.method).toBe('POST');
      expect(e.body).toBe(c.arrives);
      expect(e.headers['content-type']).toBe(c.contentType);
      expect(r.apiCheckResult?.request.data).toBe(c.arrives);
    });
  }

  it('a content-type set by the user is kept', async () => {
    const r = await run(
      apiCheck({
        url: `${plain.origin}/echo`,
        method: 'PUT',
        bodyType: 'JSON',
        body: '{}',
        headers: [{ key: 'Content-Type', value: 'application/vnd.api+json' }],
      }),
      context(),
    );
    expect(echoed(r).headers['content-type']).toBe('application/vnd.api+json');
    expect(echoed(r).method).toBe('PUT');
  });

  it('basicAuth becomes an Authorization: Basic header', async () => {
    const r = await run(
      apiCheck({ url: `${plain.origin}/echo`, basicAuth: { username: 'user', password: 'pa:ss' } }),
      context(),
    );
    expect(echoed(r).headers['authorization']).toBe(`Basic ${Buffer.from('user:pa:ss').toString('base64')}`);
  });

  it('HEAD sends no body and reads none', async () => {
    const r = await run(
      apiCheck({ url: `${plain.origin}/text`, method: 'HEAD', bodyType: 'RAW', body: 'x' }),
      context(),
    );
    expect(r.apiCheckResult?.response?.status).toBe(200);
    expect(r.apiCheckResult?.response?.body).toBe('');
    expect(r.hasFailures).toBe(false);
  });
});

describe('redirects', () => {
  it('followed: final response, final URL and the hops are recorded', async () => {
    const r = await run(apiCheck({ url: `${plain.origin}/redirect/3`, followRedirects: true }), context());
    expect(r.apiCheckResult?.response?.status).toBe(200);
    expect(r.apiCheckResult?.response?.body).toBe('done');
    expect(r.details?.['finalUrl']).toBe(`${plain.origin}/redirect/0`);
    expect(r.details?.['redirects']).toHaveLength(3);
  });

  it('not followed: the 302 itself is the response', async () => {
    const r = await run(apiCheck({ url: `${plain.origin}/redirect/3`, followRedirects: false }), context());
    expect(r.apiCheckResult?.response?.status).toBe(302);
    expect(r.apiCheckResult?.response?.headers?.['location']).toBe('/redirect/2');
    expect(r.hasFailures).toBe(false);
  });

  it('at most 10 are followed', async () => {
    const ok = await run(apiCheck({ url: `${plain.origin}/redirect/10` }), context());
    expect(ok.apiCheckResult?.response?.status).toBe(200);
    const tooMany = await run(apiCheck({ url: `${plain.origin}/redirect/11` }), context());
    expect(tooMany.hasFailures).toBe(true);
    expect(tooMany.hasErrors).toBe(false);
    expect(tooMany.error).toBe('Too many redirects (10)');
    expect(tooMany.apiCheckResult?.requestError).toBe('Too many redirects (10)');
    // The last response, the redirect that was not followed, is kept.
    expect(tooMany.apiCheckResult?.response?.status).toBe(302);
    expect(tooMany.apiCheckResult?.response?.headers?.['location']).toBe('/redirect/0');
    expect(tooMany.details?.finalUrl).toBe(`${plain.origin}/redirect/1`);
    expect(tooMany.details?.redirects).toHaveLength(10);
  });
});

describe('TLS', () => {
  it('skipSSL on a self-signed server passes and reports the certificate', async () => {
    const r = await run(apiCheck({ url: `${secure.origin}/text`, skipSSL: true }), context());
    expect(r.hasFailures).toBe(false);
    const tls = r.apiCheckResult?.response?.tls;
    expect(tls).toMatchObject({
      subjectCN: 'localhost',
      issuerCN: 'localhost',
      authorized: false,
      authorizationError: 'DEPTH_ZERO_SELF_SIGNED_CERT',
    });
    expect(tls?.fingerprint256).toMatch(/^([0-9A-F]{2}:){31}[0-9A-F]{2}$/);
    expect(tls?.daysRemaining).toBeGreaterThanOrEqual(28);
    expect(tls?.daysRemaining).toBeLessThanOrEqual(30);
    expect(Date.parse(tls?.validTo ?? '')).toBeGreaterThan(Date.parse(tls?.validFrom ?? ''));
    expect(r.details?.['tls']).toEqual(tls);
  });

  it('without skipSSL the run fails with a named TLS error, certificate still reported', async () => {
    const r = await run(apiCheck({ url: `${secure.origin}/text` }), context());
    expect(r.hasFailures).toBe(true);
    expect(r.hasErrors).toBe(false);
    expect(r.error).toBe('TLS error: self-signed certificate (DEPTH_ZERO_SELF_SIGNED_CERT)');
    expect(r.apiCheckResult?.requestError).toBe(r.error);
    expect(r.apiCheckResult?.response).toBeNull();
    expect(r.details?.['tls']).toMatchObject({ subjectCN: 'localhost', authorized: false });
  });

  it('https timing phases include a real handshake', async () => {
    const r = await run(apiCheck({ url: `${secure.origin}/text`, skipSSL: true }), context());
    const p = r.apiCheckResult?.response?.timingPhases;
    expect(p?.tls).toBeGreaterThan(0);
    expect(p?.tcp).toBeGreaterThan(0);
    const t = r.apiCheckResult?.response?.timings ?? {};
    expect(Object.keys(t)).toEqual(['start', 'socket', 'lookup', 'connect', 'secureConnect', 'response', 'end']);
  });
});

describe('results survive secret scrubbing (as the daemon stores them)', () => {
  const scrubber = new Scrubber(['unrelated-secret']);

  it('an HTTPS result keeps details.tls, the same certificate as response.tls', async () => {
    const r = scrubber.scrubDeep(await run(apiCheck({ url: `${secure.origin}/text`, skipSSL: true }), context()));
    expect(r.apiCheckResult?.response?.tls).toMatchObject({ subjectCN: 'localhost', authorized: false });
    expect(r.details?.['tls']).toEqual(r.apiCheckResult?.response?.tls);
  });

  it('two JSON_BODY assertions that select the same object both keep it as actual', async () => {
    const assertions: Assertion[] = [
      { source: 'JSON_BODY', comparison: 'HAS_KEY', property: '$.meta', target: 'version' },
      { source: 'JSON_BODY', comparison: 'NOT_EMPTY', property: '$.meta', target: '' },
    ];
    const r = scrubber.scrubDeep(await run(apiCheck({ url: `${plain.origin}/json`, assertions }), context()));
    expect(r.apiCheckResult?.assertions.map((a) => a.actual)).toEqual([
      { version: '1.2.3', ok: true },
      { version: '1.2.3', ok: true },
    ]);
  });
});

describe('timings and connections', () => {
  it('timingPhases are all present, non-negative, and add up to total', async () => {
    const r = await run(apiCheck({ url: `${plain.origin}/big/100000` }), context());
    const p = r.apiCheckResult?.response?.timingPhases;
    expect(p).toBeTruthy();
    for (const k of ['wait', 'dns', 'tcp', 'tls', 'firstByte', 'download', 'total'] as const) {
      expect(typeof p?.[k]).toBe('number');
      expect(p?.[k]).toBeGreaterThanOrEqual(0);
    }
    expect(p?.tls).toBe(0); // plain http
    const sum =
      (p?.wait ?? 0) + (p?.dns ?? 0) + (p?.tcp ?? 0) + (p?.tls ?? 0) + (p?.firstByte ?? 0) + (p?.download ?? 0);
    expect(Math.abs(sum - (p?.total ?? 0))).toBeLessThan(0.01);
    const t = r.apiCheckResult?.response?.timings ?? {};
    // cumulative: each event at or after the one before
    const order = ['start', 'socket', 'lookup', 'connect', 'response', 'end'].map((k) => t[k] ?? -1);
    expect(order.every((v, i) => v >= 0 && (i === 0 || v >= (order[i - 1] ?? 0)))).toBe(true);
  });

  it('every run opens its own connection (and TLS session)', async () => {
    for (const server of [plain, secure]) {
      const before = server.connections();
      for (let i = 0; i < 3; i++) {
        const r = await run(apiCheck({ url: `${server.origin}/text`, skipSSL: true }), context());
        expect(r.hasFailures).toBe(false);
      }
      expect(server.connections() - before).toBe(3);
    }
  });

  it('redirects on the same origin still use a new connection per hop', async () => {
    const before = plain.connections();
    await run(apiCheck({ url: `${plain.origin}/redirect/2` }), context());
    expect(plain.connections() - before).toBe(3);
  });
});

describe('response limits', () => {
  it(`body is capped at RESPONSE_BODY_CAP_BYTES (${RESPONSE_BODY_CAP_BYTES}) and marked truncated`, async () => {
    expect(RESPONSE_BODY_CAP_BYTES).toBe(256 * 1024);
    const size = RESPONSE_BODY_CAP_BYTES + 50_000;
    const r = await run(apiCheck({ url: `${plain.origin}/big/${size}` }), context());
    expect(r.apiCheckResult?.response?.body.length).toBe(RESPONSE_BODY_CAP_BYTES);
    expect(r.apiCheckResult?.response?.bodyTruncated).toBe(true);
    // the rest was read (and discarded), so download timing covers the whole body
    expect(r.details?.['bodyBytes']).toBe(size);
    expect(r.details?.['bodyComplete']).toBe(true);
  });

  it('a body exactly at the cap is not truncated', async () => {
    const r = await run(apiCheck({ url: `${plain.origin}/big/${RESPONSE_BODY_CAP_BYTES}` }), context());
    expect(r.apiCheckResult?.response?.bodyTruncated).toBe(false);
  });

  it('degraded: slower than degradedResponseTime, below max', async () => {
    const r = await run(
      apiCheck({ url: `${plain.origin}/delay/300` }, { degradedResponseTime: 100, maxResponseTime: 20_000 }),
      context(),
    );
    expect(r.responseTime).toBeGreaterThanOrEqual(300);
    expect(r.isDegraded).toBe(true);
    expect(r.overMaxResponseTime).toBe(false);
    expect(r.hasFailures).toBe(false);
  });

  it('over max: fails, not degraded', async () => {
    const r = await run(
      apiCheck({ url: `${plain.origin}/delay/300` }, { degradedResponseTime: 50, maxResponseTime: 100 }),
      context(),
    );
    expect(r.overMaxResponseTime).toBe(true);
    expect(r.isDegraded).toBe(false);
    expect(r.hasFailures).toBe(true);
    expect(r.error).toMatch(/^Response time \d+ ms is over the maximum of 100 ms$/);
  });

  it('fast responses are neither degraded nor over max', async () => {
    const r = await run(apiCheck({ url: `${plain.origin}/text` }), context());
    expect(r.isDegraded).toBe(false);
    expect(r.overMaxResponseTime).toBe(false);
  });
});

describe('verdict', () => {
  it('no assertions, no shouldFail: a 500 fails, as every 4xx/5xx does (the reference)', async () => {
    const r = await run(apiCheck({ url: `${plain.origin}/status/500` }), context());
    expect(r.apiCheckResult?.response?.status).toBe(500);
    expect(r.apiCheckResult?.response?.statusText).toBe('Internal Server Error');
    expect(r.hasFailures).toBe(true);
    expect(r.hasErrors).toBe(false);
    expect(r.error).toBe(
      'HTTP 500 Internal Server Error: a 4xx or 5xx status fails the check unless it has shouldFail',
    );
  });

  it('a failed assertion fails the run and says which', async () => {
    const assertions: Assertion[] = [{ source: 'STATUS_CODE', comparison: 'EQUALS', property: '', target: '200' }];
    const r = await run(apiCheck({ url: `${plain.origin}/status/500`, assertions }), context());
    expect(r.hasFailures).toBe(true);
    expect(r.hasErrors).toBe(false);
    expect(r.error).toBe('Assertion failed: STATUS_CODE EQUALS "200" (actual: 500)');
    expect(r.apiCheckResult?.assertions[0]).toMatchObject({ actual: 500, passed: false });
  });

  const status = (target: string): Assertion[] => [
    { source: 'STATUS_CODE', comparison: 'EQUALS', property: '', target },
  ];
  // The reference: shouldFail treats 4xx and 5xx as passed; successful responses still pass; only
  // failed assertions fail the check. Without shouldFail a 4xx/5xx fails whatever is asserted.
  const shouldFailCases: Array<{
    name: string;
    path: string;
    assertions: Assertion[];
    shouldFail: boolean;
    fails: boolean;
    error?: string;
  }> = [
    { name: 'a 200 with shouldFail passes', path: '/status/200', assertions: [], shouldFail: true, fails: false },
    {
      name: 'a 200 with shouldFail asserting 200 passes',
      path: '/status/200',
      assertions: status('200'),
      shouldFail: true,
      fails: false,
    },
    {
      name: 'a 404 with shouldFail asserting 404 passes',
      path: '/status/404',
      assertions: status('404'),
      shouldFail: true,
      fails: false,
    },
    {
      name: 'a 500 with shouldFail and no assertions passes',
      path: '/status/500',
      assertions: [],
      shouldFail: true,
      fails: false,
    },
    {
      name: 'a 404 with shouldFail asserting 200 fails on the assertion',
      path: '/status/404',
      assertions: status('200'),
      shouldFail: true,
      fails: true,
      error: 'Assertion failed: STATUS_CODE EQUALS "200" (actual: 404)',
    },
    {
      name: 'a 404 without shouldFail asserting 200 fails on the assertion',
      path: '/status/404',
      assertions: status('200'),
      shouldFail: false,
      fails: true,
      error: 'Assertion failed: STATUS_CODE EQUALS "200" (actual: 404)',
    },
    {
      name: 'a 404 without shouldFail asserting 404 fails on the status',
      path: '/status/404',
      assertions: status('404'),
      shouldFail: false,
      fails: true,
      error: 'HTTP 404 Not Found: a 4xx or 5xx status fails the check unless it has shouldFail',
    },
  ];
  for (const c of shouldFailCases) {
    it(`shouldFail: ${c.name}`, async () => {
      const r = await run(
        apiCheck({ url: `${plain.origin}${c.path}`, assertions: c.assertions }, { shouldFail: c.shouldFail }),
        context(),
      );
      expect(r.hasFailures).toBe(c.fails);
      expect(r.hasErrors).toBe(false);
      expect(r.error).toBe(c.error ?? null);
    });
  }

  it('shouldFail: the status it excused is in details; a network failure is not excused', async () => {
    const excused = await run(apiCheck({ url: `${plain.origin}/status/503` }, { shouldFail: true }), context());
    expect(excused.details?.shouldFail).toEqual({
      excused: 'HTTP 503 Service Unavailable: a 4xx or 5xx status fails the check unless it has shouldFail',
    });
    const refused = await run(apiCheck({ url: 'http://127.0.0.1:1/' }, { shouldFail: true }), context());
    expect(refused.hasFailures).toBe(true);
    expect(refused.error).toMatch(/^Connection refused/);
    expect(refused.details?.shouldFail).toBeUndefined();
  });

  it('assertions of every source against a live response', async () => {
    const assertions: Assertion[] = [
      { source: 'STATUS_CODE', comparison: 'LESS_THAN', property: '', target: '300' },
      { source: 'JSON_BODY', comparison: 'EQUALS', property: '$.data[0].id', target: '7' },
      { source: 'JSON_BODY', comparison: 'HAS_KEY', property: '$.meta', target: 'version' },
      { source: 'HEADERS', comparison: 'CONTAINS', property: 'Content-Type', target: 'json' },
      { source: 'HEADERS', comparison: 'EQUALS', property: 'content-type', target: 'utf-8', regex: 'charset=(\\S+)' },
      { source: 'TEXT_BODY', comparison: 'CONTAINS', property: '', target: '"second"' },
      { source: 'RESPONSE_TIME', comparison: 'LESS_THAN', property: '', target: '20000' },
    ];
    const r = await run(apiCheck({ url: `${plain.origin}/json`, assertions }), context());
    expect(r.apiCheckResult?.assertions.map((a) => a.passed)).toEqual(assertions.map(() => true));
    expect(r.hasFailures).toBe(false);
  });
});

describe('network failures are named check failures', () => {
  it('connection refused', async () => {
    const r = await run(apiCheck({ url: 'http://127.0.0.1:1/' }), context());
    expect(r.hasFailures).toBe(true);
    expect(r.hasErrors).toBe(false);
    expect(r.error).toBe('Connection refused by 127.0.0.1:1');
    expect(r.apiCheckResult?.requestError).toBe(r.error);
    expect(r.apiCheckResult?.response).toBeNull();
    expect(r.apiCheckResult?.assertions).toEqual([]);
  });

  it('DNS failure on a .invalid name (own resolver and OS resolver)', async () => {
    for (const useOsDnsResolver of [false, true]) {
      const r = await run(apiCheck({ url: 'http://nope.invalid/' }), context({ useOsDnsResolver }));
      expect(r.hasFailures).toBe(true);
      expect(r.hasErrors).toBe(false);
      // ENOTFOUND normally; a machine without any DNS may say EAI_AGAIN
      expect(r.error).toMatch(/^DNS failure: could not resolve "nope\.invalid" \((ENOTFOUND|EAI_AGAIN)\)$/);
    }
  });

  it('connection reset by the server', async () => {
    const r = await run(apiCheck({ url: `${plain.origin}/reset` }), context());
    expect(r.hasFailures).toBe(true);
    expect(r.hasErrors).toBe(false);
    expect(['Connection reset', 'Connection closed by the server before it sent a response']).toContain(r.error);
  });

  it('invalid URL and unsupported scheme are failures, not throws', async () => {
    const bad = await run(apiCheck({ url: 'not a url' }), context());
    expect(bad.error).toBe('Invalid URL: "not a url"');
    expect(bad.hasErrors).toBe(false);
    const ftp = await run(apiCheck({ url: 'ftp://127.0.0.1/' }), context());
    expect(ftp.error).toMatch(/^Unsupported URL scheme "ftp:"/);
  });

  it('a plain-http server behind an https URL is a TLS error', async () => {
    const r = await run(apiCheck({ url: `https://127.0.0.1:${plain.port}/text` }), context());
    expect(r.hasFailures).toBe(true);
    // the code depends on the OpenSSL build (ERR_SSL_WRONG_VERSION_NUMBER with Node 24's)
    expect(r.error).toMatch(
      /^TLS error: wrong version number — the server does not seem to speak TLS on this port \((ERR_SSL_WRONG_VERSION_NUMBER|EPROTO)\)$/,
    );
  });

  it('timeout: a server that never answers', async () => {
    const r = await run(apiCheck({ url: `${plain.origin}/hang` }), context({ timeoutMs: 400 }));
    expect(r.hasFailures).toBe(true);
    expect(r.hasErrors).toBe(false);
    expect(r.error).toBe('Timed out after 400 ms while waiting for the response');
    expect(r.responseTime).toBeGreaterThanOrEqual(390);
    expect(r.responseTime).toBeLessThan(5000);
  });

  it('timeout signalled by the daemon through ctx.signal (AbortSignal.timeout) is a timeout, not a cancel', async () => {
    const r = await run(
      apiCheck({ url: `${plain.origin}/hang` }),
      context({ timeoutMs: 60_000, signal: AbortSignal.timeout(300) }),
    );
    expect(r.error).toBe('Timed out after 60000 ms while waiting for the response');
  });

  it('cancel via ctx.signal returns promptly with requestError "cancelled"', async () => {
    const controller = new AbortController();
    const arrived = plain.nextRequest('/hang');
    const pending = run(
      apiCheck({ url: `${plain.origin}/hang` }),
      context({ signal: controller.signal, timeoutMs: 60_000 }),
    );
    await arrived; // the request is at the server and waiting: cancel now
    const t = performance.now();
    controller.abort();
    const r = await pending;
    expect(performance.now() - t).toBeLessThan(2000);
    expect(r.apiCheckResult?.requestError).toBe('cancelled');
    expect(r.error).toBe('cancelled');
    expect(r.hasErrors).toBe(false);
    expect(r.hasFailures).toBe(true);
  });

  it('a signal already aborted returns at once without connecting', async () => {
    const controller = new AbortController();
    controller.abort();
    const before = plain.connections();
    const r = await run(apiCheck({ url: `${plain.origin}/text` }), context({ signal: controller.signal }));
    expect(r.apiCheckResult?.requestError).toBe('cancelled');
    expect(plain.connections()).toBe(before);
  });
});

describe('DNS and IP family', () => {
  it('localhost resolves with the own resolver (falling back to getaddrinfo) and with the OS resolver', async () => {
    for (const useOsDnsResolver of [false, true]) {
      const r = await run(apiCheck({ url: `http://localhost:${plain.port}/text` }), context({ useOsDnsResolver }));
      expect(r.hasFailures).toBe(false);
      expect(r.details?.['remoteAddress']).toBe('127.0.0.1');
      expect(r.details?.['resolvedVia']).toBe('lookup');
      expect(r.apiCheckResult?.response?.timingPhases?.dns).toBeGreaterThan(0);
    }
  });

  it('an IP literal needs no DNS (dns phase 0)', async () => {
    const r = await run(apiCheck({ url: `${plain.origin}/text` }), context());
    expect(r.details?.['resolvedVia']).toBe('literal');
    expect(r.apiCheckResult?.response?.timingPhases?.dns).toBe(0);
  });

  it('IPv6 preferred but the name has only IPv4: falls back to IPv4', async () => {
    // /etc/hosts may map localhost to ::1 too; then the preference picks it, and the server (on
    // 127.0.0.1 only) refuses — a refusal is an answer and not a reason to switch families.
    const r = await run(
      apiCheck({ url: `http://localhost:${plain.port}/text`, ipFamily: 'IPv6' }),
      context({ useOsDnsResolver: true }),
    );
    if (r.details?.['ipFamily'] === 'IPv6') {
      expect(r.error).toMatch(/^Connection refused by \[::1\]:/);
    } else {
      expect(r.hasFailures).toBe(false);
      expect(r.details?.['ipFamily']).toBe('IPv4');
    }
  });
});

/** Whether this machine can listen on the IPv6 loopback. */
async function hasIpv6Loopback(): Promise<boolean> {
  return new Promise((resolve) => {
    const s = net.createServer();
    s.once('error', () => resolve(false));
    s.listen(0, '::1', () => s.close(() => resolve(true)));
  });
}

describe('IPv6', async () => {
  const v6 = await hasIpv6Loopback();
  const title = v6
    ? 'requests an IPv6 literal on ::1'
    : 'IPv6 literal on ::1: skipped, this machine has no IPv6 loopback';
  it.skipIf(!v6)(title, async () => {
    const server = await startServer({ host: '::1' });
    try {
      const r = await run(apiCheck({ url: `${server.origin}/text`, ipFamily: 'IPv6' }), context());
      expect(r.hasFailures).toBe(false);
      expect(r.details?.['remoteAddress']).toBe('::1');
      expect(r.details?.['ipFamily']).toBe('IPv6');
      const refused = await run(apiCheck({ url: 'http://[::1]:1/' }), context());
      expect(refused.error).toBe('Connection refused by [::1]:1');
    } finally {
      await server.close();
    }
  });
});

describe('more request handling', () => {
  it('302 after POST continues with GET and no body; 307 repeats the POST with its body', async () => {
    const to = encodeURIComponent('/echo');
    const r302 = await run(
      apiCheck({ url: `${plain.origin}/goto/302?to=${to}`, method: 'POST', bodyType: 'JSON', body: '{"a":1}' }),
      context(),
    );
    expect(echoed(r302)).toMatchObject({ method: 'GET', body: '' });
    expect(echoed(r302).headers['content-type']).toBeUndefined();
    const r307 = await run(
      apiCheck({ url: `${plain.origin}/goto/307?to=${to}`, method: 'POST', bodyType: 'JSON', body: '{"a":1}' }),
      context(),
    );
    expect(echoed(r307)).toMatchObject({ method: 'POST', body: '{"a":1}' });
  });

  it('credentials are not sent on to another origin after a redirect', async () => {
    const basicAuth = { username: 'u', password: 'p' };
    const same = await run(
      apiCheck({ url: `${plain.origin}/goto/302?to=${encodeURIComponent('/echo')}`, basicAuth }),
      context(),
    );
    expect(echoed(same).headers['authorization']).toMatch(/^Basic /);
    const other = `http://localhost:${plain.port}/echo`; // same server, different origin
    const cross = await run(
      apiCheck({ url: `${plain.origin}/goto/302?to=${encodeURIComponent(other)}`, basicAuth }),
      context(),
    );
    expect(cross.details?.['finalUrl']).toBe(other);
    expect(echoed(cross).headers['authorization']).toBeUndefined();
  });

  it('a gzip body the user asked for is decompressed for assertions', async () => {
    const assertions: Assertion[] = [
      { source: 'JSON_BODY', comparison: 'EQUALS', property: '$.zipped', target: 'true' },
    ];
    const r = await run(
      apiCheck({ url: `${plain.origin}/gzip`, headers: [{ key: 'Accept-Encoding', value: 'gzip' }], assertions }),
      context(),
    );
    expect(r.apiCheckResult?.response?.body).toBe('{"zipped":true}');
    expect(r.hasFailures).toBe(false);
  });

  it('a timeout while the body is still arriving names that phase', async () => {
    const r = await run(apiCheck({ url: `${plain.origin}/partial` }), context({ timeoutMs: 300 }));
    expect(r.error).toBe('Timed out after 300 ms while reading the response body');
    expect(r.hasErrors).toBe(false);
  });

  it('an invalid header in the definition is a failed run, not an agent error', async () => {
    const r = await run(
      apiCheck({ url: `${plain.origin}/text`, headers: [{ key: 'bad header', value: 'x' }] }),
      context(),
    );
    expect(r.hasFailures).toBe(true);
    expect(r.hasErrors).toBe(false);
    expect(r.error).toMatch(/^Invalid request: /);
  });
});
