/**
 * Browser and multistep checks end to end: created through the public API of a real service, run by
 * a real agent process in headless Chromium against pages on loopback, results read back through
 * GET /v2/check-results; a running browser check cancelled through POST /v1/check-runs/{id}/cancel.
 */
import { chmodSync, mkdirSync, rmSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type PageServer, processesUnder, startPageServer } from '../agent/browser-fixtures.ts';
import { Api, createAccount, type Proc, startAgent, startService, tempDir, until } from './harness.ts';

describe('service and agent run browser and multistep checks end to end', () => {
  let data: Awaited<ReturnType<typeof tempDir>>;
  let service: { proc: Proc; url: string };
  let agent: Proc;
  let pages: PageServer;
  let api: Api;
  // Short (Chromium's socket path lives in the job folder and has a length limit), made anew, and
  // passable for the sandbox uids.
  const jobsTmp = '/tmp/obe2e';
  rmSync(jobsTmp, { recursive: true, force: true });
  mkdirSync(jobsTmp, { mode: 0o755 });
  chmodSync(jobsTmp, 0o755);

  beforeAll(async () => {
    data = await tempDir('e2e-browser');
    pages = await startPageServer();
    service = await startService({ DATA_DIR: data.dir });
    api = new Api(service.url, await createAccount(data.dir));
  }, 120_000);

  afterAll(async () => {
    await agent?.stop();
    await service?.proc.stop();
    await pages?.close();
    await data?.remove();
    rmSync(jobsTmp, { recursive: true, force: true });
  });

  const firstResult = (checkId: string) =>
    until(
      async () => {
        const r = await api.results(checkId);
        return r[0];
      },
      { what: `a result of check ${checkId}`, timeoutMs: 120_000 },
    );

  it('runs a passing and a failing browser check, a multistep check, and cancels a running one', {
    timeout: 240_000,
  }, async () => {
    const location = await api.createLocation('e2e-pw');
    // TMPDIR short: job folders (and Chromium's socket inside them) live under it.
    agent = startAgent({
      API_KEY: location.key,
      API_URL: service.url,
      SPOOL_DIR: `${data.dir}/spool`,
      TMPDIR: jobsTmp,
    });
    const common = { frequency: 1440, privateLocations: ['e2e-pw'] };
    const pass = await api.ok<{ id: string }>('POST', '/v1/checks/browser', {
      ...common,
      name: 'home passes',
      script: `const { test, expect } = require('@playwright/test');\ntest('home', async ({ page }) => {\n  await page.goto('${pages.url}/');\n  await expect(page).toHaveTitle('Home page');\n});\n`,
    });
    const fail = await api.ok<{ id: string }>('POST', '/v1/checks/browser', {
      ...common,
      name: 'home fails',
      script: `await page.goto('${pages.url}/');\n\nif ((await page.title()) !== 'Elsewhere') throw new Error('not the page we wanted');\n`,
    });
    const multi = await api.ok<{ id: string }>('POST', '/v1/checks/multistep', {
      ...common,
      name: 'api steps',
      script: `const { test, expect } = require('@playwright/test');\ntest('items', async ({ request }) => {\n  const res = await request.get('${pages.url}/api/items');\n  expect((await res.json()).items).toHaveLength(2);\n});\n`,
    });

    const passed = await firstResult(pass.id);
    expect(passed).toMatchObject({ hasFailures: false, hasErrors: false, error: null, runLocation: 'e2e-pw' });
    expect((passed?.browserCheckResult as { pages: Array<{ title: string }> } | undefined)?.pages[0]?.title).toBe(
      'Home page',
    );
    const failed = await firstResult(fail.id);
    expect(failed).toMatchObject({
      hasFailures: true,
      hasErrors: false,
      error: 'script.js:3:49: Error: not the page we wanted',
    });
    expect((failed?.browserCheckResult as { errors: Array<{ line: number }> } | undefined)?.errors[0]?.line).toBe(3);
    const multiResult = await firstResult(multi.id);
    expect(multiResult).toMatchObject({ hasFailures: false, error: null });
    expect(multiResult?.multiStepCheckResult).toBeTypeOf('object');

    // A check whose page never answers, cancelled while Chromium waits on it.
    const reached = pages.waitFor('/hang-e2e');
    const hang = await api.ok<{ id: string }>('POST', '/v1/checks/browser', {
      ...common,
      name: 'hangs',
      script: `await page.goto('${pages.url}/hang-e2e');`,
    });
    const started = await agent.waitForLog((l) => l.msg === 'run started' && l.checkId === hang.id);
    await reached;
    const cancel = await api.ok<{ cancelRequested: boolean }>('POST', `/v1/check-runs/${String(started.runId)}/cancel`);
    expect(cancel.cancelRequested).toBe(true);
    const cancelled = await firstResult(hang.id);
    expect(cancelled).toMatchObject({ isCancelled: true });
    // The agent is idle again: no process of any browser run is left under its job folders.
    await until(
      async () => (processesUnder(`${jobsTmp}/outpost-jobs`, { browserOnly: true }).length === 0 ? true : undefined),
      { what: 'no browser processes left' },
    );
  });
});
