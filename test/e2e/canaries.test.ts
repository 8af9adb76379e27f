/**
 * Canary secrets end to end: the real service and a real agent process, checks whose variables,
 * headers, URL and body carry secrets, a target that echoes what it got. Everything the agent sends
 * (results as the service stored them, error reports) or logs (its stdout and stderr) is collected
 * and must hold no canary in any form (as given, URL-, form-, JSON-, HTML-escaped or base64).
 *
 * The last three live in user code and run in the sandbox (src/agent/sandbox/, runtimes installed by
 * `npm run runtimes:install`): a setup script prints a secret variable and sets
 * process.env.OUTPOST_SECRET_RUNTIME (built at run time, so no job or check holds it), a teardown
 * script throws with a secret variable in the message.
 */
import { describe, expect } from 'vitest';
import { formsOf, REDACTED } from '../../src/agent/scrub/index.ts';
import { stackTest } from '../support/e2e-test.ts';
import { until } from './harness.ts';

const CANARY = {
  /** An account variable (secret), sent in a non-sensitive request header. */
  accountVariable: 'cnry-account-Q7v!x',
  /** A group variable (secret), sent URL-encoded in the query string. */
  groupVariable: 'cnry group/Z9&k=1',
  /** A check variable (secret), sent in the JSON body (it has a quote and a backslash). */
  checkVariable: 'cnry-check"W4\\y',
  /** The value of the Authorization header (secret whatever it is). */
  header: 'cnry-bearer-H3mT0k',
  /** A Set-Cookie value the target answers with. */
  setCookie: 'cnry-cookie-S5pq',
  /** A secret variable in the URL path. */
  url: 'cnry-path-U2xx',
  /** A secret variable sent base64-encoded inside a longer base64 text in the body. */
  body: 'cnry-b64-B8zz',
  /** A secret variable as a host name: the DNS failure lands in the result and the agent's log. */
  logLine: 'cnry-dns-l6ww',
  /** A secret variable a setup script prints (console.log: the check log in the result). */
  scriptOutput: 'cnry-print-P4rr',
  /** A secret variable in the message of an error a teardown script throws. */
  thrownError: 'cnry-throw-T7qq',
  /** A value a setup script puts into process.env.OUTPOST_SECRET_RUNTIME, then prints and sends. */
  runtimeSecret: 'cnry-runtime-R1aa',
};

const received: string[] = [];
const it = stackTest({
  name: 'e2e-canaries',
  location: 'canaries',
  target: (req, res) => {
    let body = '';
    req.on('data', (c) => (body += c));
    req.on('end', () => {
      received.push(JSON.stringify({ url: req.url, headers: req.headers, body }));
      // Echo what came, except the sensitive headers: those are redacted by name, not by value.
      const { authorization: _a, cookie: _c, ...headers } = req.headers;
      res
        .writeHead(200, { 'content-type': 'application/json', 'set-cookie': `sid=${CANARY.setCookie}; HttpOnly` })
        .end(JSON.stringify({ url: req.url, headers, body }));
    });
  },
  // Error reports go to the service's envelope endpoint, whose DSN is rooted at PUBLIC_URL.
  publicUrl: true,
  agentEnv: { EXTERNAL_OBSERVABILITY: 'on', LOG_LEVEL: 'DEBUG' },
});

describe('no canary secret leaves the agent', () => {
  it.beforeAll(async ({ api, target }) => {
    await api.ok('POST', '/v1/variables', { key: 'ACCOUNT_TOKEN', value: CANARY.accountVariable, secret: true });
    const group = await api.ok<{ id: number }>('POST', '/v2/check-groups', {
      name: 'canary group',
      environmentVariables: [{ key: 'GROUP_QUERY', value: CANARY.groupVariable, secret: true }],
    });
    // Every check runs every 10 s (frequency 0: frequencyOffset seconds) at the canaries location.
    const createOnce = (body: Record<string, unknown>) =>
      api.createApiCheck({ frequency: 0, frequencyOffset: 10, privateLocations: ['canaries'], ...body });
    const blob = Buffer.from(`user:${CANARY.body}:tail`).toString('base64');
    await createOnce({
      name: 'echo',
      groupId: group.id,
      environmentVariables: [
        { key: 'CHECK_BODY', value: CANARY.checkVariable, secret: true },
        { key: 'URL_PATH', value: CANARY.url, secret: true },
        { key: 'BODY_B64', value: CANARY.body, secret: true },
      ],
      request: {
        method: 'POST',
        url: `${target.url}/${CANARY.url}?g=${encodeURIComponent(CANARY.groupVariable)}`,
        bodyType: 'JSON',
        body: JSON.stringify({ pw: CANARY.checkVariable, blob }),
        headers: [
          { key: 'X-Account-Token', value: CANARY.accountVariable },
          { key: 'Authorization', value: `Bearer ${CANARY.header}` },
        ],
        assertions: [{ source: 'TEXT_BODY', comparison: 'CONTAINS', property: '', target: CANARY.checkVariable }],
      },
    });
    await createOnce({
      name: 'dns failure',
      environmentVariables: [{ key: 'HOST', value: CANARY.logLine, secret: true }],
      request: { method: 'GET', url: `http://${CANARY.logLine}.invalid/` },
    });
    const [a, b, c] = CANARY.runtimeSecret.split('-');
    await createOnce({
      name: 'scripted',
      environmentVariables: [
        { key: 'PRINTED', value: CANARY.scriptOutput, secret: true },
        { key: 'THROWN', value: CANARY.thrownError, secret: true },
      ],
      localSetupScript: [
        `process.env.OUTPOST_SECRET_RUNTIME = [${JSON.stringify(a)}, ${JSON.stringify(b)}, ${JSON.stringify(c)}].join('-');`,
        "console.log('printed', process.env.PRINTED, 'runtime', process.env.OUTPOST_SECRET_RUNTIME);",
        'console.error(JSON.stringify({ printed: process.env.PRINTED }));',
        "request.headers['X-Runtime'] = process.env.OUTPOST_SECRET_RUNTIME;",
      ].join('\n'),
      localTearDownScript: "throw new Error('teardown failed with ' + process.env.THROWN);",
      request: { method: 'GET', url: `${target.url}/scripted` },
    });
  }, 120_000);

  it('scrubs results, logs and error reports of every canary in every form', async ({
    api,
    agent,
    service,
    location,
  }) => {
    const checks = await api.ok<Array<{ id: string; name: string }>>('GET', '/v1/checks');
    const results = await until(
      async () => {
        const all = await Promise.all(checks.map((c) => api.results(c.id)));
        return all.every((r) => r.length > 0) ? all.flat() : undefined;
      },
      { what: 'a result of each canary check', timeoutMs: 60_000 },
    );
    // The agent logged the end of both runs (so its log lines about them are in).
    await until(async () => (agent.lines.filter((l) => l.msg === 'run finished').length >= 3 ? true : undefined), {
      what: 'three runs finished',
    });

    // Positive controls: the secrets really were in play, so a missing scrub would show.
    const atTarget = received.join('\n');
    for (const c of [CANARY.accountVariable, CANARY.header, CANARY.url, CANARY.runtimeSecret])
      expect(atTarget).toContain(c);
    const scripted = results.find((r) => r.name === 'scripted') as {
      hasFailures: boolean;
      apiCheckResult: { jobLog: unknown };
    };
    // The teardown threw: a failed check, with the scripts' output as its check log.
    expect(scripted.hasFailures).toBe(true);
    expect(JSON.stringify(scripted.apiCheckResult.jobLog)).toContain('printed');
    const resultText = JSON.stringify(results);
    expect(resultText).toContain(REDACTED);
    expect(JSON.stringify(agent.lines)).toContain('DNS failure');

    const reports = await api.ok<{ entries: unknown[] }>('GET', `/v1/private-locations/${location.id}/error-reports`);
    const everything = {
      results: resultText,
      agentStdout: JSON.stringify(agent.lines),
      agentStderr: agent.stderr.join('\n'),
      serviceLog: JSON.stringify(service.proc.lines),
      errorReports: JSON.stringify(reports),
    };
    const leaks: string[] = [];
    for (const [name, value] of Object.entries(CANARY)) {
      for (const form of formsOf(value)) {
        for (const [where, text] of Object.entries(everything))
          if (text.includes(form)) leaks.push(`${name} as ${JSON.stringify(form)} in ${where}`);
      }
    }
    expect(leaks).toEqual([]);

    // Sensitive headers are redacted by name in the stored result.
    const echo = results.find((r) => r.name === 'echo') as {
      apiCheckResult: { request: { headers: Record<string, string> }; response: { headers: Record<string, string> } };
    };
    const requestHeaders = Object.fromEntries(
      Object.entries(echo.apiCheckResult.request.headers).map(([k, v]) => [k.toLowerCase(), v]),
    );
    expect(requestHeaders.authorization).toBe(REDACTED);
    expect(echo.apiCheckResult.response.headers['set-cookie']).toBe(REDACTED);
  }, 120_000);
});
