/**
 * URL monitors run by the API engine, against real node:http and node:https servers on loopback
 * (api-fixtures.ts): the registered runner, status-code and response-time assertions, the
 * response-time limits, redirects followed or not, and skipSSL.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RUNNERS } from '../../src/agent/checks/index.ts';
import type { UrlAssertion, UrlCheckDefinition } from '../../src/shared/checks/monitors.ts';
import { urlCheck } from '../support/url-check.ts';
import { context, makeSelfSigned, startServer, type TestServer } from './api-fixtures.ts';

let server: TestServer;
let secure: TestServer;

beforeAll(async () => {
  server = await startServer();
  secure = await startServer({ tls: makeSelfSigned() });
});

afterAll(async () => {
  await server?.close();
  await secure?.close();
});

const status = (comparison: UrlAssertion['comparison'], target: string): UrlAssertion => ({
  source: 'STATUS_CODE',
  comparison,
  property: '',
  target,
  regex: null,
});
const time = (comparison: UrlAssertion['comparison'], target: string): UrlAssertion => ({
  source: 'RESPONSE_TIME',
  comparison,
  property: '',
  target,
  regex: null,
});

// The runner the agent registers for URL (loaded on first use), as the daemon calls it.
const runUrl = (check: UrlCheckDefinition) =>
  (RUNNERS.get('URL') as NonNullable<ReturnType<typeof RUNNERS.get>>).run(check, context());

describe('URL monitors', () => {
  it('GETs the URL through the API engine and passes status-code assertions', async () => {
    const before = server.seen.length;
    const outcome = await runUrl(
      urlCheck({
        url: `${server.origin}/status/204`,
        assertions: [status('EQUALS', '204'), status('LESS_THAN', '300')],
      }),
    );
    expect(outcome).toMatchObject({ hasFailures: false, isDegraded: false, error: null });
    expect(outcome.apiCheckResult?.response?.status).toBe(204);
    expect(outcome.apiCheckResult?.assertions.map((a) => [a.source, a.passed, a.actual])).toEqual([
      ['STATUS_CODE', true, 204],
      ['STATUS_CODE', true, 204],
    ]);
    const seen = server.seen.slice(before);
    expect(seen.map((r) => [r.method, r.url, r.body])).toEqual([['GET', '/status/204', '']]);
  });

  it('fails a status-code assertion, and a 5xx on its own', async () => {
    const asserted = await runUrl(
      urlCheck({ url: `${server.origin}/status/200`, assertions: [status('NOT_EQUALS', '200')] }),
    );
    expect(asserted.hasFailures).toBe(true);
    expect(asserted.error).toBe('Assertion failed: STATUS_CODE NOT_EQUALS "200" (actual: 200)');
    const broken = await runUrl(urlCheck({ url: `${server.origin}/status/503` }));
    expect(broken.hasFailures).toBe(true);
    expect(broken.error).toMatch(/^HTTP 503/);
  });

  it('judges response time by assertion and by the degraded and maximum limits', async () => {
    const slow = `${server.origin}/delay/300`;
    const asserted = await runUrl(urlCheck({ url: slow, assertions: [time('LESS_THAN', '100')] }));
    expect(asserted.hasFailures).toBe(true);
    expect(asserted.error).toMatch(/^Assertion failed: RESPONSE_TIME LESS_THAN "100" \(actual: \d+/);
    expect(asserted.responseTime).toBeGreaterThanOrEqual(300);

    const degraded = await runUrl(
      urlCheck(
        { url: slow, assertions: [time('GREATER_THAN', '250')] },
        { degradedResponseTime: 200, maxResponseTime: 5000 },
      ),
    );
    expect(degraded).toMatchObject({ hasFailures: false, isDegraded: true, overMaxResponseTime: false });

    const over = await runUrl(urlCheck({ url: slow }, { degradedResponseTime: 100, maxResponseTime: 200 }));
    expect(over).toMatchObject({ hasFailures: true, overMaxResponseTime: true });
    expect(over.error).toMatch(/^Response time \d+ ms is over the maximum of 200 ms/);
  });

  it('follows redirects, or with followRedirects off judges the redirect itself', async () => {
    const followed = await runUrl(
      urlCheck({ url: `${server.origin}/redirect/2`, assertions: [status('EQUALS', '200')] }),
    );
    expect(followed).toMatchObject({ hasFailures: false });
    expect(followed.details?.redirects).toHaveLength(2);
    expect(followed.details?.finalUrl).toBe(`${server.origin}/redirect/0`);

    const kept = await runUrl(
      urlCheck({ url: `${server.origin}/redirect/2`, followRedirects: false, assertions: [status('EQUALS', '302')] }),
    );
    expect(kept).toMatchObject({ hasFailures: false });
    expect(kept.apiCheckResult?.response?.status).toBe(302);
    expect(kept.details?.redirects).toEqual([]);
  });

  it('fails on a self-signed certificate unless skipSSL, and reports the certificate either way', async () => {
    const strict = await runUrl(urlCheck({ url: `${secure.origin}/status/200` }));
    expect(strict.hasFailures).toBe(true);
    expect(strict.error).toMatch(/self-signed certificate/);
    const lenient = await runUrl(urlCheck({ url: `${secure.origin}/status/200`, skipSSL: true }));
    expect(lenient.hasFailures).toBe(false);
    expect(lenient.apiCheckResult?.response?.tls).toMatchObject({
      subjectCN: 'localhost',
      authorized: false,
      daysRemaining: 29,
    });
  });

  it('never runs user code, even when the job carries a group script', async () => {
    const outcome = await runUrl(
      urlCheck({ url: `${server.origin}/status/200` }, { localSetupScript: 'throw new Error("must not run")' }),
    );
    expect(outcome).toMatchObject({ hasFailures: false, hasErrors: false });
  });
});
