/**
 * Variables end to end on the agent: the daemon leases an API check whose request names
 * `{{VARIABLE}}`s, the real API runner sends it to a loopback HTTP server, and the result goes to
 * the protocol stub. The target must see the values (double braces URI-encoded, triple braces as
 * they are), a missing variable must arrive as written and be noted in the result, and no secret
 * value may be in the stored result in any form.
 */
import { once } from 'node:events';
import { afterEach, describe, expect, it } from 'vitest';
import { apiCheckRunner } from '../../src/agent/checks/api.ts';
import type { CheckRunner } from '../../src/agent/checks/runner.ts';
import type { AgentDaemon } from '../../src/agent/daemon.ts';
import type { ApiRequest, EnvironmentVariable } from '../../src/shared/checks/types.ts';
import type { RunResult } from '../../src/shared/protocol.ts';
import { apiCheck } from './api-fixtures.ts';
import { type JsonServer, startServer } from './helpers.ts';
import { makeJob, type ProtocolStub } from './protocol-stub.ts';
import { type Cleanups, startStubDaemon } from './stub-daemon.ts';

const cleanups: Cleanups = [];
afterEach(async () => {
  while (cleanups.length) await cleanups.pop()?.();
});

/** A daemon with the real API runner against the stub, and a loopback target that answers 200. */
async function setup(): Promise<{ stub: ProtocolStub; daemon: AgentDaemon; target: JsonServer }> {
  const target = await startServer((_req, _body, res) => {
    res.writeHead(200, { 'content-type': 'text/plain' }).end('ok');
  });
  cleanups.push(() => target.close());
  const { stub, daemon } = await startStubDaemon(cleanups, {
    apiKey: 'pl_variables_test',
    runners: new Map([['API', apiCheckRunner as CheckRunner]]),
    uptimeConcurrency: 2,
    shutdownGraceSeconds: 5,
  });
  const registered = once(daemon, 'registered');
  await daemon.start();
  await registered;
  return { stub, daemon, target };
}

/** Runs one API check through the daemon; `vars(targetUrl)` gives its variables. The target's request and the stored result. */
async function runThrough(
  request: Partial<ApiRequest> & { url: string },
  vars: (targetUrl: string) => EnvironmentVariable[],
) {
  const { stub, target } = await setup();
  const job = makeJob({ check: apiCheck(request, { environmentVariables: vars(target.url) }) });
  stub.addJob(job);
  await stub.until(() => stub.stored.length === 1);
  const seen = target.requests[0];
  if (!seen) throw new Error('the target saw no request');
  return { seen, result: stub.stored[0] as RunResult, job };
}

/** A POST whose URL (after the target's base), a header value, a query value, body and basic auth each hold a template. */
function everyField(t: {
  path: string;
  header: string;
  query: string;
  body: string;
  username: string;
  password: string;
}): Partial<ApiRequest> & {
  url: string;
} {
  return {
    method: 'POST',
    url: `{{{BASE}}}${t.path}`,
    headers: [{ key: 'X-Value', value: t.header }],
    queryParameters: [{ key: 'p', value: t.query }],
    body: t.body,
    bodyType: 'RAW',
    basicAuth: { username: t.username, password: t.password },
  };
}

const plain = (key: string, value: string): EnvironmentVariable => ({ key, value, secret: false });
const secret = (key: string, value: string): EnvironmentVariable => ({ key, value, secret: true });

describe('variables in API checks, through the daemon', () => {
  it('puts values into the URL, header values, query values, body and basic auth', async () => {
    const { seen, result } = await runThrough(
      everyField({
        path: '/items/{{ITEM}}?q={{QUERY}}',
        header: 'tenant {{{TENANT}}}',
        query: '{{PAGE}}',
        body: '{"name":"{{{NAME}}}","encoded":"{{NAME}}"}',
        username: '{{{USER}}}',
        password: '{{{PASS}}}',
      }),
      (base) => [
        plain('BASE', base),
        plain('ITEM', 'a b/c'),
        plain('QUERY', 'x&y=z'),
        plain('TENANT', 'Acme Corp'),
        plain('PAGE', '7'),
        plain('NAME', 'Zoë & co'),
        plain('USER', 'alice'),
        plain('PASS', 'pa:ss word'),
      ],
    );
    // Double braces: encodeURIComponent, so a value cannot break out of its URL component.
    expect(seen.path).toBe('/items/a%20b%2Fc?q=x%26y%3Dz&p=7');
    expect(seen.headers['x-value']).toBe('tenant Acme Corp');
    expect(JSON.parse(seen.body)).toEqual({ name: 'Zoë & co', encoded: 'Zo%C3%AB%20%26%20co' });
    expect(seen.headers.authorization).toBe(`Basic ${Buffer.from('alice:pa:ss word').toString('base64')}`);
    expect(result.hasFailures).toBe(false);
    expect(result.details?.variableNotes).toBeUndefined();
    // The result records the request as sent.
    expect(result.apiCheckResult?.request.url).toContain('/items/a%20b%2Fc?q=x%26y%3Dz');
  });

  it('sends a reference to a missing variable as written and says so in the result', async () => {
    const { seen, result } = await runThrough(
      { url: '{{{BASE}}}/x?token={{{NOPE}}}', headers: [{ key: 'X-Id', value: '{{$NOT_A_BUILTIN}}' }] },
      (base) => [plain('BASE', base)],
    );
    expect(seen.path).toBe('/x?token={{{NOPE}}}');
    expect(seen.headers['x-id']).toBe('{{$NOT_A_BUILTIN}}');
    expect(result.hasFailures).toBe(false);
    expect(result.details?.variableNotes).toEqual([
      {
        field: 'request.url',
        reference: '{{{NOPE}}}',
        message: expect.stringMatching(/no variable NOPE is defined.*sent as written/),
      },
      {
        field: 'request.headers[0].value',
        reference: '{{$NOT_A_BUILTIN}}',
        message: expect.stringMatching(/\$NOT_A_BUILTIN is not a built-in variable/),
      },
    ]);
  });

  it('fills the built-ins: $UUID, $RANDOM_NUMBER, moment and the run variables', async () => {
    const before = Date.now();
    const { seen, job } = await runThrough(
      {
        url: '{{{BASE}}}/b',
        headers: [
          { key: 'X-Uuid', value: '{{$UUID}}' },
          { key: 'X-Uuid-2', value: '{{$UUID}}' },
          { key: 'X-Random', value: '{{$RANDOM_NUMBER}}' },
          { key: 'X-Unix', value: '{{moment "X"}}' },
          { key: 'X-Day', value: '{{{moment "2 days ago" "YYYY-MM-DD"}}}' },
          { key: 'X-Now', value: '{{{moment}}}' },
          { key: 'X-Run', value: '{{CHECK_RUN_ID}} {{{REGION}}} {{CHECK_TYPE}} {{{CHECK_NAME}}}' },
        ],
      },
      (base) => [plain('BASE', base)],
    );
    const h = seen.headers;
    const uuidV4 = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;
    expect(h['x-uuid']).toMatch(uuidV4);
    expect(h['x-uuid-2']).toMatch(uuidV4);
    expect(h['x-uuid-2']).not.toBe(h['x-uuid']);
    const n = Number(h['x-random']);
    expect(Number.isInteger(n) && n >= 0 && n <= 10_000).toBe(true);
    expect(Math.abs(Number(h['x-unix']) - Date.now() / 1000)).toBeLessThan(60);
    const twoDaysBefore = (t: number) => new Date(t - 2 * 86_400_000).toISOString().slice(0, 10);
    expect([twoDaysBefore(before), twoDaysBefore(Date.now())]).toContain(h['x-day']);
    expect(Math.abs(Date.parse(String(h['x-now'])) - Date.now())).toBeLessThan(60_000);
    expect(h['x-now']).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\+00:00$/);
    // The stub registers the agent at location `test-location`; the fixture's check is `api test`.
    expect(h['x-run']).toBe(`${job.runId} test-location API api test`);
  });

  it('scrubs a substituted secret from the stored result, raw and URI-encoded', async () => {
    const token = 'S3cr3t value/with+chars';
    const { seen, result } = await runThrough(
      everyField({
        path: '/s?raw={{{TOKEN}}}&enc={{TOKEN}}',
        header: '{{{TOKEN}}}',
        query: '{{{TOKEN}}}',
        body: 'token={{TOKEN}}&raw={{{TOKEN}}}',
        username: 'u',
        password: '{{{TOKEN}}}',
      }),
      (base) => [plain('BASE', base), secret('TOKEN', token)],
    );
    // The target really got the secret ...
    expect(seen.headers['x-value']).toBe(token);
    expect(seen.body).toBe(`token=${encodeURIComponent(token)}&raw=${token}`);
    // ... and the stored result has it in no form.
    const stored = JSON.stringify(result);
    for (const form of [
      token,
      encodeURIComponent(token),
      encodeURI(token),
      new URLSearchParams({ p: token }).toString().slice(2),
    ]) {
      expect(stored).not.toContain(form);
    }
    expect(stored).toContain('[secret]');
  });

  it('scrubs a secret inserted as it is into the URL in the form the URL parser gives it', async () => {
    // The parser encodes a space, quotes, angle brackets and the backtick differently in the path,
    // the query and the fragment, and drops the tab: forms no encoder of the raw value produces.
    const token = `it's a "secret"\t<x>\`{|}^`;
    const { seen, result } = await runThrough({ url: '{{{BASE}}}/p/{{{TOKEN}}}?q={{{TOKEN}}}' }, (base) => [
      plain('BASE', base),
      secret('TOKEN', token),
    ]);
    const sent = new URL(`http://h/p/${token}?q=${token}`);
    expect(seen.path).toBe(`${sent.pathname}${sent.search}`);
    const recorded = String(result.apiCheckResult?.request.url);
    expect(recorded).toMatch(/\/p\/\[secret\]\?q=\[secret\]$/);
    expect(JSON.stringify(result)).not.toContain(sent.pathname.slice(3));
    expect(JSON.stringify(result)).not.toContain(sent.search.slice(3));
  });
});
