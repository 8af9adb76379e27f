/**
 * Playwright's trace viewer, served by the service from playwright-core, opening a real trace (made
 * here with playwright-core against a loopback page and uploaded as the agent would) in the real
 * headless Chromium, under its own CSP while the result page keeps the strict one.
 */
import { readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { traceViewerUrl } from '../../src/service/web/console/trace-viewer.ts';
import type { BrowserCheckResult } from '../../src/shared/checks/types.ts';
import type { ArtifactServiceHarness, ArtifactTenant } from '../helpers/artifact-service.ts';
import { cspViolations, resultPageUrl } from '../helpers/console-results.ts';
import { consoleCookieHeader } from '../helpers/console-session-cookies.ts';
import { openSignedIn, resultPagesInChromium, signedInContext } from '../support/console-result-pages.ts';
import { saveScreenshot, seriousA11yViolations } from '../support/web-browser.ts';

const SHOP = `<!doctype html><html lang="en"><title>Shop</title><h1>Shop</h1>
<label>Email <input id="email"></label><button id="buy">Buy</button><p id="done" hidden>Thank you</p>
<script>document.getElementById('buy').onclick = () => { document.getElementById('done').hidden = false; };</script></html>`;

interface Shop {
  server: Server;
  url: string;
  /** Served at /trace.zip to any origin (CORS *), as a hostile site would offer a forged trace. */
  trace: Buffer | null;
  traceRequests: number;
}

/** A page on loopback for the traced browser to act on, which also offers a trace to other origins. */
async function startShop(): Promise<Shop> {
  const server = createServer((req, res) => {
    if (req.url === '/trace.zip' && shop.trace) {
      shop.traceRequests += 1;
      res.writeHead(200, { 'content-type': 'application/zip', 'access-control-allow-origin': '*' }).end(shop.trace);
      return;
    }
    res.writeHead(200, { 'content-type': 'text/html' }).end(SHOP);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const shop: Shop = {
    server,
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/`,
    trace: null,
    traceRequests: 0,
  };
  return shop;
}

/** Records a real Playwright trace of filling a field and clicking a button; resolves to its bytes. */
async function recordTrace(browser: Browser, shopUrl: string, file: string): Promise<Buffer> {
  const context = await browser.newContext();
  await context.tracing.start({ screenshots: true, snapshots: true });
  const page = await context.newPage();
  await page.goto(shopUrl);
  await page.getByLabel('Email').fill('ann@acme.test');
  await page.getByRole('button', { name: 'Buy' }).click();
  await page.getByText('Thank you').waitFor();
  await context.tracing.stop({ path: file });
  await context.close();
  return readFileSync(file);
}

/** A browser script that timed out on a click, as the agent reports it. */
function failedScript(): BrowserCheckResult {
  return {
    type: 'PLAYWRIGHT_SCRIPT',
    traceSummary: { consoleErrors: 0, networkErrors: 0, documentErrors: 0, userScriptErrors: 1 },
    pages: [],
    errors: [
      {
        name: 'TimeoutError',
        message: 'locator.click: Timeout 5000ms exceeded',
        stack: null,
        file: 'script.js',
        line: 4,
        column: 41,
        snippet:
          "  3 | await page.getByLabel('Email').fill('ann@acme.test');\n> 4 | await page.getByRole('button', { name: 'Pay' }).click();",
      },
    ],
    startTime: Date.now() - 6000,
    endTime: Date.now(),
    runtimeVersion: '2025.04',
    jobLog: [],
    jobAssets: ['trace.zip'],
    screenshots: [],
    playwrightTestVideos: [],
    playwrightTestTraces: ['trace.zip'],
  };
}

describe('trace viewer', () => {
  const pages = resultPagesInChromium('outpost-trace-', 'BROWSER');
  let h: ArtifactServiceHarness;
  let browser: Browser;
  let shop: Shop;
  let owner: ArtifactTenant;
  let resultPage: string;
  let tmp: string;

  beforeAll(async () => {
    ({ h, browser, owner, tmp } = pages);
    shop = await startShop();
    const run = await h.run(owner);
    const trace = await recordTrace(browser, shop.url, path.join(tmp, 'trace.zip'));
    await h.upload(owner, run, { name: 'trace.zip', kind: 'trace', contentType: 'application/zip', bytes: trace });
    shop.trace = trace;
    const resultId = await h.submitResult(
      owner,
      run,
      { browserCheckResult: failedScript() },
      { hasFailures: true },
      { error: 'locator.click: Timeout 5000ms exceeded' },
    );
    resultPage = resultPageUrl(h, owner.check.id, resultId);
  });

  afterAll(async () => {
    await new Promise((resolve) => shop?.server.close(resolve));
  });

  it("opens the result's trace in the trace viewer with its actions listed", async () => {
    const { context, page, response: resultResponse, violations: csp } = await openSignedIn(pages, owner, resultPage);
    expect(resultResponse?.headers()['content-security-policy']).not.toContain('worker-src');
    const errors = page.getByRole('region', { name: 'Errors' });
    expect(await errors.locator('strong').textContent()).toBe('TimeoutError: locator.click: Timeout 5000ms exceeded');
    expect(await errors.locator('code').textContent()).toBe('script.js:4:41');
    expect(await errors.locator('pre').textContent()).toContain(
      "> 4 | await page.getByRole('button', { name: 'Pay' }).click();",
    );
    expect(csp).toEqual([]);
    expect(await seriousA11yViolations(page)).toEqual([]);
    // axe's script tag is refused by the strict CSP (web-browser.ts then injects it another way):
    // the test's doing, not the page's.
    csp.splice(0);
    await saveScreenshot(page, 'console-result-failed-browser-light');

    const [viewerResponse] = await Promise.all([
      page.waitForResponse((r) => r.url().includes('/app/trace-viewer/index.html')),
      page.getByRole('link', { name: 'Open trace.zip in the trace viewer' }).click(),
    ]);
    expect(viewerResponse.headers()['content-security-policy']).toContain("worker-src 'self'");
    expect(new URL(page.url()).searchParams.get('trace')).toBe(new URL(`${resultPage}/artifacts/trace.zip`).pathname);

    const actions = page.getByRole('tabpanel', { name: 'Actions' }).getByRole('treeitem');
    await actions.getByText('Click').first().waitFor();
    const listed = await actions.allTextContents();
    expect(listed).toEqual(
      expect.arrayContaining([
        expect.stringMatching(/^Navigate to "\/"/),
        expect.stringMatching(/^Fill "ann@acme\.test"\d+msgetByLabel\('Email'\)$/),
        expect.stringMatching(/^Click\d+msgetByRole\('button', \{ name: 'Buy' \}\)$/),
      ]),
    );
    // The selected action's DOM snapshot, served by the viewer's service worker, shows the page.
    expect(await page.frameLocator('iframe.snapshot-visible').locator('h1').textContent()).toBe('Shop');
    await saveScreenshot(page, 'console-trace-viewer-light');
    expect(csp).toEqual([]);
    await context.close();
  });

  it("opens an action's snapshot in the viewer's own window (its popout page), full size", async () => {
    const context = await signedInContext(pages, owner);
    const viewer = await context.newPage();
    await viewer.goto(`${h.url}${traceViewerUrl(new URL(`${resultPage}/artifacts/trace.zip`).pathname)}`);
    await viewer.getByRole('tabpanel', { name: 'Actions' }).getByRole('treeitem').first().waitFor();
    const [popout] = await Promise.all([
      context.waitForEvent('page'),
      viewer.getByTitle('Open snapshot in a new tab').click(),
    ]);
    const csp = cspViolations(popout);
    await popout.waitForLoadState();
    expect(new URL(popout.url()).pathname).toBe('/app/trace-viewer/snapshot.html');
    expect(await popout.frameLocator('iframe').locator('h1').textContent()).toBe('Shop');
    // The page's one style attribute sizes the snapshot's iframe to the window.
    const box = await popout.locator('iframe').boundingBox();
    expect(box?.width).toBe(popout.viewportSize()?.width);
    expect(box?.height).toBe(popout.viewportSize()?.height);
    expect(csp).toEqual([]);
    await context.close();
  });

  it('refuses to load a trace from another origin or a data: URL, which would run its snapshots on this origin', async () => {
    const context = await signedInContext(pages, owner);
    // The data: URL holds an empty zip: the fetch is what is refused, whatever the bytes.
    const hostile = [`${shop.url}trace.zip`, 'data:application/zip;base64,UEsFBgAAAAAAAAAAAAAAAAAAAAAAAA=='];
    for (const trace of hostile) {
      const page = await context.newPage();
      const csp = cspViolations(page);
      await page.goto(`${h.url}/app/trace-viewer/index.html?${new URLSearchParams({ trace })}`);
      // Either the viewer says it could not load the trace, or it lists the trace's actions.
      await page.getByRole('alert').filter({ hasText: /\S/ }).or(page.getByRole('treeitem').first()).waitFor();
      expect(await page.getByRole('treeitem').count()).toBe(0);
      // Its service worker may fetch only from this origin (connect-src 'self').
      expect(csp.join('\n')).toMatch(/connect-src 'self'/);
      await page.close();
    }
    expect(shop.traceRequests).toBe(0);
    await context.close();
  });

  it("gives another account's session neither the trace nor the result", async () => {
    const other = await h.tenant('Globex');
    const cookie = await consoleCookieHeader(h.url, other);
    for (const url of [resultPage, `${resultPage}/artifacts/trace.zip`]) {
      const res = await fetch(url, { headers: { cookie, accept: 'text/html' } });
      expect(res.status, url).toBe(404);
    }
  });
});
