/**
 * The walking skeleton end to end: the real service and a real agent process, a real HTTP target on
 * loopback, checks created through the public API, results read back through it.
 */
import { describe, expect, test } from 'vitest';
import { stackTest } from '../support/e2e-test.ts';
import { Api, createAccount, startAgent, startService, tempDir, until } from './harness.ts';

const it = stackTest({
  name: 'e2e-run',
  location: 'e2e-main',
  target: (req, res) => {
    if (req.url === '/broken') return void res.writeHead(503).end('down');
    res.writeHead(200, { 'content-type': 'application/json', 'x-target': 'yes' }).end('{"status":"ok"}');
  },
});

describe('an agent without Chromium or runtimes (the uptime image)', () => {
  // Its own service and agent, so plain vitest `test`; it comes first because the file's stack, once
  // started by the next describe's first test, runs until the file ends.
  test('offers only API, TCP, DNS and ICMP checks and URL and SSL monitors, and says why the rest are left out', async () => {
    const data = await tempDir('e2e-uptime');
    const service = await startService({ DATA_DIR: data.dir });
    const api = new Api(service.url, await createAccount(data.dir));
    const location = await api.createLocation('uptime-only');
    const agent = startAgent({
      API_KEY: location.key,
      API_URL: service.url,
      SPOOL_DIR: `${data.dir}/spool`,
      RUNTIMES_DIR: `${data.dir}/no-runtimes`,
      CHROMIUM_PATH: `${data.dir}/no-chromium`,
    });
    try {
      const registered = await agent.waitForLog((l) => l.msg === 'registered; taking work');
      expect(registered.checkTypes).toEqual(['API', 'TCP', 'DNS', 'ICMP', 'URL', 'SSL']);
      const omitted = agent.lines
        .filter((l) => l.msg === 'check type not offered by this agent')
        .map((l) => l.checkType);
      expect(omitted.sort()).toEqual(['BROWSER', 'MULTI_STEP', 'PLAYWRIGHT']);
    } finally {
      await agent.stop();
      await service.proc.stop();
      await data.remove();
    }
  });
});

describe('service and agent run API checks end to end', () => {
  it('stores a passing and a failing result with the reference fields', async ({ api, target }) => {
    const passing = await api.createApiCheck({
      name: 'target up',
      frequency: 0,
      frequencyOffset: 10,
      privateLocations: ['e2e-main'],
      request: {
        method: 'GET',
        url: `${target.url}/`,
        assertions: [
          { source: 'STATUS_CODE', comparison: 'EQUALS', property: '', target: '200' },
          { source: 'RESPONSE_TIME', comparison: 'LESS_THAN', property: '', target: '5000' },
        ],
      },
    });
    const failing = await api.createApiCheck({
      name: 'target broken',
      frequency: 0,
      frequencyOffset: 10,
      privateLocations: ['e2e-main'],
      request: {
        method: 'GET',
        url: `${target.url}/broken`,
        assertions: [{ source: 'STATUS_CODE', comparison: 'EQUALS', property: '', target: '200' }],
      },
    });

    const [pass] = await until(
      async () => {
        const r = await api.results(passing.id);
        return r.length > 0 ? r : undefined;
      },
      { what: 'a result of the passing check' },
    );
    expect(pass).toMatchObject({
      checkId: passing.id,
      name: 'target up',
      hasFailures: false,
      hasErrors: false,
      runLocation: 'e2e-main',
      resultType: 'FINAL',
    });
    expect(typeof pass!.responseTime).toBe('number');
    expect(Date.parse(String(pass!.stoppedAt))).toBeGreaterThanOrEqual(Date.parse(String(pass!.startedAt)));
    const apiResult = pass!.apiCheckResult as { response: { status: number }; assertions: Array<{ passed: boolean }> };
    expect(apiResult.response.status).toBe(200);
    expect(apiResult.assertions.every((a) => a.passed)).toBe(true);

    const [fail] = await until(
      async () => {
        const r = await api.results(failing.id);
        return r.length > 0 ? r : undefined;
      },
      { what: 'a result of the failing check' },
    );
    expect(fail).toMatchObject({ checkId: failing.id, hasFailures: true, hasErrors: false });
    expect((fail!.apiCheckResult as { response: { status: number } }).response.status).toBe(503);
  });

  it('shows the running agent on its private location', async ({ api, agent, location }) => {
    await agent.waitForLog((l) => l.msg === 'registered; taking work');
    const view = await api.ok<{
      agentCount: number;
      lastSeen: string;
      runningAgents: Array<{ version: string; count: number; agents: Array<{ id: string }> }>;
    }>('GET', `/v1/private-locations/${location.id}`);
    expect(view.agentCount).toBe(1);
    expect(Date.parse(view.lastSeen)).toBeGreaterThan(Date.now() - 60_000);
    expect(view.runningAgents).toHaveLength(1);
    expect(view.runningAgents[0]).toMatchObject({ count: 1, isOutdated: false });
  });

  it('does not show one account the results of another', async ({ api, service, data }) => {
    const checks = await api.ok<Array<{ id: string }>>('GET', '/v1/checks');
    const other = new Api(service.url, await createAccount(data.dir));
    const res = await other.call('GET', `/v2/check-results/${checks[0]!.id}`);
    expect(res.status).toBe(404);
  });
});
