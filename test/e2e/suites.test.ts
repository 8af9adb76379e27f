/**
 * A Playwright check suite cancelled through the public API while it runs on a real agent process:
 * the run stops within seconds, its report marks the interrupted test, and the result says cancelled.
 */
import { EventEmitter, once } from 'node:events';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { packSuite } from '../agent/suite-helpers.ts';
import { Api, createAccount, type Proc, startAgent, startService, startTarget, tempDir, until } from './harness.ts';

let data: Awaited<ReturnType<typeof tempDir>>;
let service: { proc: Proc; url: string };
let agent: Proc;
let target: Awaited<ReturnType<typeof startTarget>>;
let api: Api;
const started = new EventEmitter();

beforeAll(async () => {
  data = await tempDir('e2e-suite');
  target = await startTarget((req, res) => {
    if (req.url === '/started') started.emit('started');
    res
      .writeHead(200, { 'content-type': 'text/html' })
      .end('<html><head><title>Outpost suite</title></head><body>hi</body></html>');
  });
  service = await startService({ DATA_DIR: data.dir });
  api = new Api(service.url, await createAccount(data.dir));
  const location = await api.createLocation('suites');
  agent = startAgent({
    API_KEY: location.key,
    API_URL: service.url,
    SPOOL_DIR: `${data.dir}/spool`,
    // Installs reach the registry through whatever CA this machine trusts.
    ...(process.env.NODE_EXTRA_CA_CERTS ? { NODE_EXTRA_CA_CERTS: process.env.NODE_EXTRA_CA_CERTS } : {}),
  });
  await agent.waitForLog((l) => l.msg === 'registered; taking work');
}, 120_000);

afterAll(async () => {
  await agent?.stop();
  await service?.proc.stop();
  await target?.close();
  await data?.remove();
});

it('cancels a running suite through the service: stops within seconds, marks the test interrupted, result cancelled', async () => {
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
