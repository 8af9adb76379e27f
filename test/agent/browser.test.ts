/**
 * Browser and multistep checks end to end in real headless Chromium (the system's, CHROMIUM_PATH)
 * with Playwright from the real runtimes (npm run runtimes:install), against pages on loopback:
 * passing and failing scripts of both shapes, the failing line, pages visited, screenshots, video
 * and trace, a timeout, crashes, a cancel, secrets scrubbed from the trace, multistep API steps.
 */
import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type BrowserCheckContext, runPlaywrightCheck } from '../../src/agent/browser/engine.ts';
import type { Runtime } from '../../src/agent/runtimes.ts';
import type { SandboxPool } from '../../src/agent/sandbox/pool.ts';
import type { BrowserCheckResult, MultiStepCheckResult } from '../../src/shared/checks/types.ts';
import {
  browserCheck,
  KeepingSink,
  multiStepCheck,
  type PageServer,
  processesUnder,
  quietLog,
  tempFolders,
  zipText,
} from './browser-fixtures.ts';
import { startBrowserRig, stopBrowserRig } from './browser-rig.ts';

const PAGE_SECRET = 'canary-page-secret-7c41d9';
const HEADER_SECRET = 'canary-header-secret-52be0a';
const AUTH_VALUE = 'Bearer sensitive-auth-value-31f7';

let server: PageServer;
let pool: SandboxPool;
let work: string;
let jobsRoot: string;

beforeAll(async () => {
  let runtimes: Runtime[];
  ({ runtimes, pool, server, jobsRoot } = await startBrowserRig('/tmp/ob-', PAGE_SECRET));
  expect(
    runtimes.map((r) => r.id),
    'run npm run runtimes:install',
  ).toEqual(['2026.04', '2025.04']);
  work = mkdtempSync(path.join(os.tmpdir(), 'outpost-browser-test-'));
});

afterAll(async () => {
  await stopBrowserRig({ server, pool, jobsRoot });
  if (work) rmSync(work, { recursive: true, force: true });
});

let sinks = 0;
function context(extra: Partial<BrowserCheckContext> = {}): BrowserCheckContext & { artifacts: KeepingSink } {
  sinks += 1;
  return {
    signal: new AbortController().signal,
    timeoutMs: 60_000,
    log: quietLog,
    useOsDnsResolver: false,
    sandboxes: pool,
    jobsRoot,
    artifacts: new KeepingSink(path.join(work, `artifacts-${sinks}`)),
    ...extra,
  } as BrowserCheckContext & { artifacts: KeepingSink };
}

const browserResult = (o: { details?: Record<string, unknown> }) => o.details?.browserCheckResult as BrowserCheckResult;
const multiResult = (o: { details?: Record<string, unknown> }) =>
  o.details?.multiStepCheckResult as MultiStepCheckResult;

/** A @playwright/test script of one test, `title`, given `fixtures`: `body` starts on line 3. */
function specScript(title: string, fixtures: string, body: string[]): string {
  return [
    "const { test, expect } = require('@playwright/test');",
    `test('${title}', async ({ ${fixtures} }) => {`,
    ...body.map((line) => `  ${line}`),
    '});',
  ].join('\n');
}

function expectCleanedUp(): void {
  expect(processesUnder(jobsRoot)).toEqual([]);
  expect(tempFolders(jobsRoot).filter((f) => f.startsWith(`${jobsRoot}/`))).toEqual([]);
}

describe('browser checks', { timeout: 90_000 }, () => {
  it('passes a @playwright/test script and records the pages it visited', async () => {
    const ctx = context();
    const out = await runPlaywrightCheck(
      browserCheck(
        specScript('home and next', 'page', [
          `await page.goto('${server.url}/');`,
          "await expect(page).toHaveTitle('Home page');",
          "await page.click('#next');",
          "await expect(page.locator('h1')).toHaveText('Second');",
        ]),
      ),
      ctx,
    );
    expect(out.error).toBeNull();
    expect(out.hasFailures).toBe(false);
    expect(out.hasErrors).toBe(false);
    const r = browserResult(out);
    expect(r.type).toBe('PLAYWRIGHT_TEST');
    expect(r.runtimeVersion).toBe('2026.04');
    expect(r.pages.map((p) => [p.url, p.title])).toEqual([
      [`${server.url}/`, 'Home page'],
      [`${server.url}/second`, 'Second page'],
    ]);
    const home = r.pages[0]!;
    expect(home.consoleErrors.some((e) => e.text.includes('boom from page'))).toBe(true);
    expect(home.failedRequests).toContainEqual(
      expect.objectContaining({ url: `${server.url}/missing.png`, status: 404 }),
    );
    expect(r.traceSummary.consoleErrors).toBeGreaterThanOrEqual(1);
    expect(r.traceSummary.networkErrors).toBeGreaterThanOrEqual(1);
    // A passing test still has its trace and video (trace and video are always on).
    expect(r.playwrightTestTraces).toEqual(['trace-1.zip']);
    expect(r.playwrightTestVideos.length).toBe(1);
    expect(r.playwrightTestJsonReportFile).toBe('report.json');
    expect(statSync(ctx.artifacts.file(r.playwrightTestVideos[0]!)).size).toBeGreaterThan(0);
    expectCleanedUp();
  });

  it('fails a @playwright/test assertion with its message and the line of the script', async () => {
    const ctx = context();
    const out = await runPlaywrightCheck(
      browserCheck(
        [
          "import { test, expect } from '@playwright/test';",
          '',
          "test('heading', async ({ page }) => {",
          `  await page.goto('${server.url}/');`,
          "  await expect(page.locator('h1')).toHaveText('Goodbye', { timeout: 1000 });",
          '});',
        ].join('\n'),
      ),
      ctx,
    );
    expect(out.hasFailures).toBe(true);
    expect(out.hasErrors).toBe(false);
    expect(out.error).toMatch(/^script\.js:5:\d+: .*toHaveText/);
    const r = browserResult(out);
    expect(r.errors[0]).toMatchObject({ file: 'script.js', line: 5, test: 'heading' });
    expect(r.errors[0]!.message).toContain('Goodbye');
    // The failure's screenshot, the video and the trace are artifacts.
    expect(r.screenshots.length).toBeGreaterThanOrEqual(1);
    expect(readFileSync(ctx.artifacts.file(r.screenshots[0]!)).subarray(1, 4).toString()).toBe('PNG');
    expect(r.playwrightTestVideos.length).toBe(1);
    expect(r.playwrightTestTraces.length).toBe(1);
    const trace = await zipText(ctx.artifacts.file(r.playwrightTestTraces[0]!));
    expect(trace.names.some((n) => n.endsWith('.trace'))).toBe(true);
    expect(ctx.artifacts.details().artifacts?.map((a) => a.name)).toEqual(r.jobAssets);
    expectCleanedUp();
  });

  it('runs a plain script with page in scope and one that launches its own Chromium', async () => {
    const given = await runPlaywrightCheck(
      browserCheck([`await page.goto('${server.url}/');`, "console.log('title is', await page.title());"].join('\n')),
      context(),
    );
    expect(given.error).toBeNull();
    const r = browserResult(given);
    expect(r.type).toBe('PLAYWRIGHT_SCRIPT');
    expect(r.pages[0]).toMatchObject({ url: `${server.url}/`, title: 'Home page' });
    expect(r.jobLog.map((l) => l.msg)).toContain('title is Home page');

    const ctx = context();
    const own = await runPlaywrightCheck(
      browserCheck(
        [
          "const { chromium } = require('playwright');",
          'const b = await chromium.launch();',
          'const p = await b.newPage();',
          `await p.goto('${server.url}/second');`,
          "await p.screenshot({ path: 'mine.png' });",
          "if ((await p.title()) !== 'Second page') throw new Error('wrong title');",
          'await b.close();',
        ].join('\n'),
      ),
      ctx,
    );
    expect(own.error).toBeNull();
    const o = browserResult(own);
    expect(o.pages[0]).toMatchObject({ url: `${server.url}/second`, title: 'Second page' });
    // The script's own screenshot, and the trace and video its own browser got anyway.
    expect(o.screenshots.length).toBe(1);
    expect(o.playwrightTestTraces.length).toBe(1);
    expect(o.playwrightTestVideos.length).toBe(1);
    expectCleanedUp();
  });

  it('maps an error thrown in a plain script and in a dependency to their lines', async () => {
    const out = await runPlaywrightCheck(
      browserCheck(
        [
          "const { check } = require('./lib/check.js');",
          `await page.goto('${server.url}/');`,
          'await check(page);',
        ].join('\n'),
        {
          dependencies: [
            {
              path: 'lib/check.js',
              content:
                "exports.check = async (page) => {\n  const t = await page.title();\n  throw new Error('title was ' + t);\n};\n",
            },
          ],
        },
      ),
      context(),
    );
    expect(out.hasFailures).toBe(true);
    expect(out.error).toBe('lib/check.js:3:9: Error: title was Home page');
    const r = browserResult(out);
    expect(r.errors[0]!.stack).not.toContain('/work/');
    expect(r.screenshots.length).toBe(1);
    expectCleanedUp();
  });

  it('stops a script at its time limit with a clear reason and keeps its trace', async () => {
    const started = Date.now();
    const out = await runPlaywrightCheck(
      browserCheck(`await page.goto('${server.url}/');\nawait page.goto('${server.url}/hang-timeout');`),
      context({ timeoutMs: 20_000 }),
    );
    expect(Date.now() - started).toBeLessThan(20_000);
    expect(out.hasFailures).toBe(true);
    expect(out.error).toMatch(/time limit|Timeout/i);
    const r = browserResult(out);
    expect(r.playwrightTestTraces.length).toBe(1);
    expectCleanedUp();
  });

  it('fails a run whose page crashes, and one whose browser is killed, without leftovers', async () => {
    const crash = await runPlaywrightCheck(
      browserCheck(`await page.goto('${server.url}/');\nawait page.goto('chrome://crash');`),
      context(),
    );
    expect(crash.hasFailures).toBe(true);
    expect(crash.hasErrors).toBe(false);
    expect(crash.error).toMatch(/^script\.js:2:\d+: .*(crash|closed)/i);

    const killed = await runPlaywrightCheck(
      browserCheck(
        specScript('killed', 'page, browser', [
          `await page.goto('${server.url}/');`,
          "process.kill(browser.process ? browser.process().pid : 0, 'SIGKILL');",
          `await page.goto('${server.url}/second');`,
        ]),
      ),
      context(),
    );
    expect(killed.hasFailures).toBe(true);
    expect(killed.error).not.toBeNull();
    expectCleanedUp();
  });

  it('stops a cancelled run at once and leaves nothing behind', async () => {
    const controller = new AbortController();
    const reached = server.waitFor('/hang-cancel');
    const running = runPlaywrightCheck(
      browserCheck(`await page.goto('${server.url}/hang-cancel');`),
      context({ signal: controller.signal }),
    );
    await reached;
    const t = Date.now();
    controller.abort(new DOMException('run cancelled', 'AbortError'));
    const out = await running;
    expect(Date.now() - t).toBeLessThan(5000);
    expect(out.hasFailures).toBe(true);
    expect(out.error).toMatch(/cancelled/);
    expectCleanedUp();
  });

  it('scrubs secrets from the trace, the report and the result', async () => {
    const ctx = context();
    const out = await runPlaywrightCheck(
      browserCheck(
        specScript('secrets', 'page', [
          "await page.setExtraHTTPHeaders({ 'x-custom-token': process.env.HEADER_TOKEN, authorization: process.env.AUTH });",
          `await page.goto('${server.url}/');`,
          "console.log('saw ' + (await page.textContent('#secret')));",
          "await page.fill('#nothing', process.env.PAGE_TOKEN, { timeout: 500 }).catch(() => {});",
          "await expect(page.locator('#secret')).toHaveText('not the secret', { timeout: 500 });",
        ]),
        {
          environmentVariables: [
            { key: 'PAGE_TOKEN', value: PAGE_SECRET, secret: true },
            { key: 'HEADER_TOKEN', value: HEADER_SECRET, secret: true },
            // Not a secret variable: its header is sensitive whatever its value.
            { key: 'AUTH', value: AUTH_VALUE, secret: false },
          ],
        },
      ),
      ctx,
    );
    expect(out.hasFailures).toBe(true);
    // The page really got the header and showed the secret: what is scrubbed was there.
    expect(server.seen.some((s) => s.headers['x-custom-token'] === HEADER_SECRET)).toBe(true);
    const r = browserResult(out);
    const trace = await zipText(ctx.artifacts.file(r.playwrightTestTraces[0]!));
    expect(trace.text).toContain('[secret]');
    expect(trace.text).toContain('x-custom-token');
    for (const secret of [PAGE_SECRET, HEADER_SECRET, 'sensitive-auth-value-31f7']) {
      expect(trace.text).not.toContain(secret);
      expect(readFileSync(ctx.artifacts.file('report.json'), 'utf8')).not.toContain(secret);
    }
    const resultText = JSON.stringify(out);
    expect(resultText).not.toContain(PAGE_SECRET);
    expect(resultText).not.toContain(HEADER_SECRET);
    expect(resultText).toContain('saw [secret]');
    expectCleanedUp();
  });

  it('reports a runtime the agent does not carry, and a missing Chromium as an agent error', async () => {
    const missingRuntime = await runPlaywrightCheck(
      browserCheck('await page.goto("about:blank")', { runtimeId: '2022.10' }),
      context(),
    );
    expect(missingRuntime.error).toMatch(/runtime 2022\.10 is not available.*2026\.04, 2025\.04/);
    const noChromium = await runPlaywrightCheck(
      browserCheck('await page.goto("about:blank")'),
      context({ browser: { chromiumPath: '/nonexistent/chromium' } }),
    );
    expect(noChromium).toMatchObject({ hasErrors: true, hasFailures: false });
    expect(noChromium.error).toMatch(/Chromium was not found at \/nonexistent\/chromium.*CHROMIUM_PATH/);
  });

  it('runs on runtime 2025.04 (Playwright 1.51) too', async () => {
    const out = await runPlaywrightCheck(
      browserCheck(
        specScript('home', 'page', [
          `await page.goto('${server.url}/');`,
          "await expect(page).toHaveTitle('Home page');",
        ]),
        { runtimeId: '2025.04' },
      ),
      context(),
    );
    expect(out.error).toBeNull();
    expect(browserResult(out).runtimeVersion).toBe('2025.04');
    expectCleanedUp();
  });
});

describe('multistep checks', { timeout: 90_000 }, () => {
  it('passes API steps against a JSON server without starting a browser', async () => {
    const out = await runPlaywrightCheck(
      multiStepCheck(
        specScript('api steps', 'request', [
          "await test.step('list', async () => {",
          `  const res = await request.get('${server.url}/api/items');`,
          '  expect(res.status()).toBe(200);',
          '  expect((await res.json()).items).toHaveLength(2);',
          '});',
          "await test.step('create', async () => {",
          `  const res = await request.post('${server.url}/api/echo', { data: { name: 'three' } });`,
          '  expect(res.status()).toBe(201);',
          "  expect(await res.json()).toEqual({ received: { name: 'three' } });",
          '});',
        ]),
      ),
      context(),
    );
    expect(out.error).toBeNull();
    const r = multiResult(out);
    expect(r.errors).toEqual([]);
    expect(r.playwrightTestTraces.length).toBe(1);
    expect(out.details?.browserCheckResult).toBeUndefined();
    expectCleanedUp();
  });

  it('fails a step with its line', async () => {
    const out = await runPlaywrightCheck(
      multiStepCheck(
        specScript('api steps', 'request', [
          `const res = await request.get('${server.url}/api/missing');`,
          'expect(res.status()).toBe(200);',
        ]),
      ),
      context(),
    );
    expect(out.hasFailures).toBe(true);
    expect(out.error).toMatch(/^script\.js:4:\d+: .*toBe/);
    expect(multiResult(out).errors[0]).toMatchObject({ line: 4, file: 'script.js' });
    expectCleanedUp();
  });
});
