/**
 * Check groups end to end: the real service and a real agent process, a real HTTP target on
 * loopback. The group's apiCheckDefaults reach the target, a deactivated group runs nothing until
 * it is activated, a refused connection is retried maxRetries times (ATTEMPT results, then one
 * FINAL), and a group trigger never has more than `concurrency` requests at the target at once.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { request } from 'undici';
import { describe, expect } from 'vitest';
import { stackTest } from '../support/e2e-test.ts';
import { type Api, until } from './harness.ts';

type Result = Record<string, unknown> & {
  resultType: string;
  attempts: number;
  apiCheckResult: { requestError: string | null } | null;
};

/** A loopback port nothing listens on: bound once to get a free number, then closed. */
async function refusedPort(): Promise<number> {
  const server = http.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

const seen: Array<{ path: string; headers: http.IncomingHttpHeaders }> = [];
const slow = { active: 0, max: 0 };
const it = stackTest({
  name: 'e2e-groups',
  location: 'grp-loc',
  target: (req, res) => {
    seen.push({ path: req.url ?? '', headers: req.headers });
    if (req.url?.startsWith('/slow')) {
      // Held a while, so runs that overlap are concurrent requests here.
      slow.active++;
      slow.max = Math.max(slow.max, slow.active);
      setTimeout(() => {
        slow.active--;
        res.writeHead(200).end('slow');
      }, 600);
      return;
    }
    res.writeHead(200).end('ok');
  },
});

describe('check groups end to end', () => {
  const resultsOf = async (api: Api, checkId: string, resultType = 'FINAL') =>
    (await api.ok<{ entries: Result[] }>('GET', `/v2/check-results/${checkId}?limit=100&resultType=${resultType}`))
      .entries;

  const waitResults = (api: Api, checkId: string, n: number, resultType = 'FINAL') =>
    until(
      async () => {
        const r = await resultsOf(api, checkId, resultType);
        return r.length >= n ? r : undefined;
      },
      { what: `${n} ${resultType} result(s) of ${checkId}` },
    );

  // A day between scheduled runs: after the run a new check gets right away, only the test's own
  // actions (activation, retries, triggers) make runs.
  const check = (api: Api, body: Record<string, unknown>) => api.createApiCheck({ frequency: 1440, ...body });
  const group = (api: Api, body: Record<string, unknown>) => api.ok<{ id: number }>('POST', '/v2/check-groups', body);

  it("sends the group's base URL, headers, query parameters and basic auth to the target", async ({ api, target }) => {
    const g = await group(api, {
      name: 'defaults',
      privateLocations: ['grp-loc'],
      apiCheckDefaults: {
        url: `${target.url}/base`,
        headers: [{ key: 'X-Group', value: 'from-group' }],
        queryParameters: [{ key: 'env', value: 'prod' }],
        assertions: [{ source: 'STATUS_CODE', comparison: 'EQUALS', target: '200' }],
        basicAuth: { username: 'grp', password: 'secret' },
      },
    });
    // No private locations of its own: it runs where its group does.
    const c = await check(api, { name: 'member', groupId: g.id, request: { method: 'GET', url: '/hello' } });
    const [result] = await waitResults(api, c.id, 1);
    expect(result).toMatchObject({ hasFailures: false, runLocation: 'grp-loc', resultType: 'FINAL' });
    const hit = seen.find((s) => s.path.startsWith('/base/hello'));
    expect(hit?.path).toBe('/base/hello?env=prod');
    expect(hit?.headers['x-group']).toBe('from-group');
    expect(hit?.headers.authorization).toBe(`Basic ${Buffer.from('grp:secret').toString('base64')}`);
    const assertions = (result!.apiCheckResult as unknown as { assertions: Array<{ source: string; passed: boolean }> })
      .assertions;
    expect(assertions).toEqual([expect.objectContaining({ source: 'STATUS_CODE', passed: true })]);
  });

  it('runs none of the checks of a deactivated group until it is activated', async ({ api, target }) => {
    const g = await group(api, { name: 'paused', activated: false, privateLocations: ['grp-loc'] });
    const paused = await check(api, {
      name: 'paused member',
      groupId: g.id,
      request: { method: 'GET', url: `${target.url}/paused` },
    });
    // A check created at the same moment in an active group runs; by its result the other would have run too.
    const sentinel = await check(api, {
      name: 'sentinel',
      privateLocations: ['grp-loc'],
      request: { method: 'GET', url: `${target.url}/sentinel` },
    });
    await waitResults(api, sentinel.id, 1);
    expect(await resultsOf(api, paused.id, 'ALL')).toEqual([]);
    expect(seen.some((s) => s.path === '/paused')).toBe(false);

    await api.ok('PUT', `/v2/check-groups/${g.id}`, { name: 'paused', activated: true });
    await waitResults(api, paused.id, 1);
    expect(seen.some((s) => s.path === '/paused')).toBe(true);
  });

  it('retries a refused connection maxRetries times: ATTEMPT results, then one FINAL', async ({ api }) => {
    const port = await refusedPort();
    const g = await group(api, {
      name: 'retrying',
      privateLocations: ['grp-loc'],
      retryStrategy: {
        type: 'FIXED',
        baseBackoffSeconds: 1,
        maxRetries: 2,
        maxDurationSeconds: 60,
        onlyOn: ['NETWORK_ERROR'],
      },
    });
    const c = await check(api, {
      name: 'refused',
      groupId: g.id,
      request: { method: 'GET', url: `http://127.0.0.1:${port}/` },
    });
    const [final] = await waitResults(api, c.id, 1);
    expect(final).toMatchObject({ hasFailures: true, resultType: 'FINAL', attempts: 3 });
    const all = await resultsOf(api, c.id, 'ALL');
    expect(all.map((r) => [r.resultType, r.attempts])).toEqual([
      ['FINAL', 3],
      ['ATTEMPT', 2],
      ['ATTEMPT', 1],
    ]);
    for (const r of all) expect(r.apiCheckResult?.requestError).toMatch(/refused/i);
    expect(await resultsOf(api, c.id, 'ATTEMPT')).toHaveLength(2);
    // Each retry waited its backoff after the failure before it.
    const started = all.map((r) => Date.parse(String(r.startedAt))).reverse();
    expect(started[1]! - started[0]!).toBeGreaterThanOrEqual(1000);
    expect(started[2]! - started[1]!).toBeGreaterThanOrEqual(1000);
  });

  it('runs every check of a triggered group, never more than concurrency at once', async ({ api, target, service }) => {
    const g = await group(api, { name: 'triggered', concurrency: 2, privateLocations: ['grp-loc'] });
    const members = [];
    for (let i = 0; i < 5; i++) {
      members.push(
        await check(api, {
          name: `slow ${i}`,
          groupId: g.id,
          groupOrder: i,
          request: { method: 'GET', url: `${target.url}/slow/${i}` },
        }),
      );
    }
    // The run each new check gets right away is not the trigger's: let those finish first.
    for (const m of members) await waitResults(api, m.id, 1);
    slow.max = 0;

    const trigger = await api.ok<{ token: string }>('POST', `/v1/triggers/check-groups/${g.id}`);
    const wrong = await request(`${service.url}/check-groups/${g.id}/trigger/not-the-token`, { method: 'POST' });
    expect(wrong.statusCode).toBe(404);
    await wrong.body.dump();
    const res = await request(`${service.url}/check-groups/${g.id}/trigger/${trigger.token}`);
    expect(res.statusCode).toBe(200);
    const started = (await res.body.json()) as { concurrency: number; runs: Array<{ checkId: string }> };
    expect(started.concurrency).toBe(2);
    expect(started.runs.map((r) => r.checkId)).toEqual(members.map((m) => m.id));

    for (const m of members) await waitResults(api, m.id, 2);
    expect(slow.max).toBe(2);
    const read = await api.ok<{ called_at: string | null }>('GET', `/v1/triggers/check-groups/${g.id}`);
    expect(read.called_at).not.toBeNull();
  });
});
