/**
 * A Playwright check suite cancelled through the public API while it runs on a real agent process:
 * the run stops within seconds, its report marks the interrupted test, and the result says cancelled.
 */
import { EventEmitter, once } from 'node:events';
import { expect } from 'vitest';
import { packSuite } from '../agent/suite-helpers.ts';
import { stackTest } from '../support/e2e-test.ts';
import { until } from './harness.ts';

const started = new EventEmitter();
const it = stackTest({
  name: 'e2e-suite',
  location: 'suites',
  target: (req, res) => {
    if (req.url === '/started') started.emit('started');
    res
      .writeHead(200, { 'content-type': 'text/html' })
      .end('<html><head><title>Outpost suite</title></head><body>hi</body></html>');
  },
  // Installs reach the registry through whatever CA this machine trusts.
  agentEnv: process.env.NODE_EXTRA_CA_CERTS ? { NODE_EXTRA_CA_CERTS: process.env.NODE_EXTRA_CA_CERTS } : {},
});

it.beforeAll(async ({ agent }) => {
  await agent.waitForLog((l) => l.msg === 'registered; taking work');
}, 120_000);

it('cancels a running suite through the service: stops within seconds, marks the test interrupted, result cancelled', async ({
  api,
  agent,
  target,
}) => {
  const spec = `
import { test } from '@playwright/test';
test('waits for a long time', async ({ page, request }) => {
  await page.goto(${JSON.stringify(target.url)});
  await request.get(${JSON.stringify(`${target.url}/started`)});
  await page.waitForTimeout(120_000);
});
`;
  const archive = await packSuite({ files: { 'tests/slow.spec.ts': spec }, omit: ['bun.lock'] });
  const running = once(started, 'started');
  const check = await api.ok<{ id: string }>('POST', '/v1/checks/playwright', {
    name: 'Slow suite',
    frequency: 1440,
    privateLocations: ['suites'],
    codeBundle: archive.toString('base64'),
  });
  // Install, start Chromium, reach the test's long wait: then cancel.
  await Promise.race([
    running,
    new Promise((_, reject) => setTimeout(() => reject(new Error('the suite never started its test')), 240_000)),
  ]);
  const runLine = await agent.waitForLog((l) => l.msg === 'run started' && l.checkId === check.id);
  const runId = String(runLine.runId);
  const cancelledAt = Date.now();
  const cancel = await api.ok<{ state: string }>('POST', `/v1/check-runs/${runId}/cancel`);
  expect(['cancelled', 'leased']).toContain(cancel.state);

  const [result] = await until(
    async () => {
      const r = await api.results(check.id);
      return r.length > 0 ? r : undefined;
    },
    { timeoutMs: 60_000, what: 'the cancelled suite result' },
  );
  expect(Date.now() - cancelledAt).toBeLessThan(30_000);
  expect(result).toMatchObject({ isCancelled: true });
  const pw = result!.playwrightCheckResult as { tests: Array<{ title: string; status: string }> };
  expect(pw.tests).toEqual(
    expect.arrayContaining([expect.objectContaining({ title: 'waits for a long time', status: 'interrupted' })]),
  );
}, 300_000);
