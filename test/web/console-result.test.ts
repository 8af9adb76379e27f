/**
 * The console's result page in the real headless Chromium: an API result's verdict, waterfall,
 * assertions, headers, body and logs; a browser result's screenshot and video, served from the
 * result's artifacts; the 404 page for another account; axe; screenshots in both themes.
 */
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import type { Browser, Page } from 'playwright-core';
import { beforeAll, describe, expect, it } from 'vitest';
import type {
  ApiCheckResult,
  BrowserCheckResult,
  DnsCheckResult,
  TcpCheckResult,
} from '../../src/shared/checks/types.ts';
import type { ArtifactServiceHarness, ArtifactTenant } from '../helpers/artifact-service.ts';
import { resultPageUrl } from '../helpers/console-results.ts';
import { consoleCookieHeader } from '../helpers/console-session-cookies.ts';
import { openSignedIn, resultPagesInChromium } from '../support/console-result-pages.ts';
import { saveScreenshot, seriousA11yViolations } from '../support/web-browser.ts';

const BODY = `{"error":"maintenance"} BODY-START ${'a'.repeat(70_000)} BODY-END`;

function apiResult(): ApiCheckResult {
  return {
    request: { method: 'GET', url: 'https://api.acme.test/login', data: '', headers: {}, params: {} },
    response: {
      status: 503,
      statusText: 'Service Unavailable',
      body: BODY,
      headers: { 'content-type': 'application/json', 'x-request-id': 'req-42', authorization: '*********' },
      timings: null,
      timingPhases: { wait: 1.5, dns: 12, tcp: 8, tls: 25, firstByte: 140, download: 9, total: 195.5 },
    },
    assertions: [
      { source: 'STATUS_CODE', comparison: 'EQUALS', property: '', target: '200', actual: 503, passed: false },
      {
        source: 'HEADERS',
        comparison: 'EQUALS',
        property: 'x-request-id',
        target: 'req-42',
        actual: 'req-42',
        passed: true,
      },
    ],
    requestError: null,
    jobLog: {
      setup: [{ time: '2026-11-23T10:00:00.000Z', stream: 'stdout', msg: 'setup: token fetched' }],
      teardown: [],
    },
    jobAssets: null,
  };
}

function browserResult(): BrowserCheckResult {
  return {
    type: 'PLAYWRIGHT_SCRIPT',
    traceSummary: { consoleErrors: 0, networkErrors: 0, documentErrors: 0, userScriptErrors: 0 },
    pages: [],
    errors: [],
    startTime: Date.parse('2026-11-23T10:00:00.000Z'),
    endTime: Date.parse('2026-11-23T10:00:02.000Z'),
    runtimeVersion: '2025.04',
    jobLog: [{ time: Date.parse('2026-11-23T10:00:01.000Z'), level: 'INFO', msg: 'checkout page opened' }],
    jobAssets: ['checkout.png', 'run.webm'],
    screenshots: ['checkout.png'],
    playwrightTestVideos: ['run.webm'],
    playwrightTestTraces: [],
  };
}

/** A second of a test pattern as VP8 WebM, made by the system's ffmpeg: a video Chromium can play. */
async function testVideo(dir: string): Promise<Buffer> {
  const file = path.join(dir, 'run.webm');
  await promisify(execFile)('ffmpeg', [
    '-hide_banner',
    '-loglevel',
    'error',
    '-f',
    'lavfi',
    '-i',
    'testsrc=size=320x240:rate=10',
    '-t',
    '1',
    '-c:v',
    'libvpx',
    '-y',
    file,
  ]);
  return readFileSync(file);
}

/** Each row's non-empty cells, spaces collapsed, joined by " | ": tables compared as text. */
function tableRows(page: Page, table: string): Promise<string[]> {
  return page.locator(`${table} tbody tr`).evaluateAll((rows) =>
    rows.map((row) =>
      [...(row as HTMLTableRowElement).cells]
        .map((cell) => (cell.textContent ?? '').replace(/\s+/g, ' ').trim())
        .filter((text) => text !== '')
        .join(' | '),
    ),
  );
}

/** The text of the first element `selector` matches ('' when it has none). */
async function textOf(page: Page, selector: string): Promise<string> {
  return (await page.locator(selector).first().textContent()) ?? '';
}

describe('console result page', () => {
  const pages = resultPagesInChromium('outpost-console-result-');
  let h: ArtifactServiceHarness;
  let browser: Browser;
  let owner: ArtifactTenant;
  let apiPage: string;
  let browserPage: string;
  let screenshotUrl: string;
  let tmp: string;

  beforeAll(async () => {
    ({ h, browser, owner, tmp } = pages);
    const apiRun = await h.run(owner);
    const apiResultId = await h.submitResult(
      owner,
      apiRun,
      {},
      { hasFailures: true },
      { apiCheckResult: apiResult(), error: 'Assertion failed: status code 503 is not 200', responseTime: 195.5 },
    );
    apiPage = resultPageUrl(h, owner.check.id, apiResultId);

    const { accountId, locationIds, frequency } = owner.check;
    const checkout = await h.service.store.checks.create({
      accountId,
      checkType: 'BROWSER',
      name: 'Checkout',
      activated: false,
      muted: false,
      frequency,
      frequencyOffset: null,
      locationIds,
      body: { name: 'Checkout', script: "await page.goto('http://127.0.0.1:9/')" },
    });
    const browserTenant = { ...owner, check: checkout };
    const run = await h.run(browserTenant);
    const shotPage = await browser.newPage();
    await shotPage.setContent('<h1>Checkout</h1><p>Order total: 42 EUR</p>');
    await h.upload(browserTenant, run, {
      name: 'checkout.png',
      kind: 'screenshot',
      contentType: 'image/png',
      bytes: await shotPage.screenshot(),
    });
    await shotPage.close();
    await h.upload(browserTenant, run, {
      name: 'run.webm',
      kind: 'video',
      contentType: 'video/webm',
      bytes: await testVideo(tmp),
    });
    const resultId = await h.submitResult(
      browserTenant,
      run,
      { browserCheckResult: browserResult() },
      { hasFailures: false },
    );
    browserPage = resultPageUrl(h, browserTenant.check.id, resultId);
    screenshotUrl = `${browserPage}/artifacts/checkout.png`;
  });

  const openAs = (account: ArtifactTenant, url: string, scheme?: 'light' | 'dark') =>
    openSignedIn(pages, account, url, scheme);

  it("shows an API result's verdict, location, agent, waterfall, assertions, headers, body and logs", async () => {
    const { context, page, response, violations } = await openAs(owner, apiPage);
    expect(response?.status()).toBe(200);
    expect(response?.headers()['content-security-policy']).toContain("style-src 'self'");
    expect(await textOf(page, 'h1')).toBe('Result of Login flow');
    const summary = await page
      .locator('.result-summary > div')
      .evaluateAll((items) =>
        items.map((i) => `${i.querySelector('dt')?.textContent}: ${i.querySelector('dd')?.textContent}`),
      );
    expect(summary).toEqual(
      expect.arrayContaining([
        'Verdict: failed',
        'Location: Office 1 (office-1)',
        'Agent: test (version 0.0.0)',
        'Error: Assertion failed: status code 503 is not 200',
      ]),
    );

    // The waterfall: phases in order, each bar starting where the last ended, with its value in text.
    expect(await tableRows(page, '.waterfall')).toEqual([
      'Wait | 1.5 ms',
      'DNS lookup | 12 ms',
      'TCP connect | 8 ms',
      'TLS handshake | 25 ms',
      'Time to first byte | 140 ms',
      'Download | 9 ms',
    ]);
    const bars = await page.$$eval('.waterfall-phase', (rects) =>
      rects.map((r) => ({
        x: Number(r.getAttribute('x')),
        width: Number(r.getAttribute('width')),
        fill: getComputedStyle(r).fill,
      })),
    );
    for (let i = 1; i < bars.length; i++) expect(bars[i]!.x).toBeCloseTo(bars[i - 1]!.x + bars[i - 1]!.width, 0);
    expect(bars[4]!.width).toBeGreaterThan(bars[1]!.width);
    // The stylesheet (not a style attribute) colours the phases.
    expect(new Set(bars.map((b) => b.fill)).size).toBeGreaterThan(3);

    expect(await tableRows(page, '.assertions')).toEqual([
      'Failed | STATUS_CODE | equals | 200 | 503',
      'Passed | HEADERS | x-request-id | equals | req-42 | req-42',
    ]);

    expect(await tableRows(page, '.headers')).toContain('x-request-id | req-42');
    const body = await textOf(page, 'pre.response-body');
    expect(body.startsWith('{"error":"maintenance"} BODY-START')).toBe(true);
    expect(body).not.toContain('BODY-END');
    expect(await textOf(page, '#response-heading ~ .note')).toContain('Showing the first 65,536 of');
    expect(await textOf(page, 'pre.logs')).toMatch(/setup stdout\s+setup: token fetched/);

    expect(violations).toEqual([]);
    expect(await seriousA11yViolations(page)).toEqual([]);
    await saveScreenshot(page, 'console-result-api-light');
    await context.close();
  });

  it("shows a browser result's screenshot inline and its video in a player that plays", async () => {
    for (const scheme of ['light', 'dark'] as const) {
      const { context, page, response, violations } = await openAs(owner, browserPage, scheme);
      expect(response?.status()).toBe(200);
      const img = page.getByRole('img', { name: 'Screenshot checkout.png' });
      await img.scrollIntoViewIfNeeded();
      const naturalWidth = await img.evaluate(async (el: HTMLImageElement) => {
        if (!el.complete) {
          await new Promise((resolve, reject) => {
            el.addEventListener('load', resolve, { once: true });
            el.addEventListener('error', reject, { once: true });
          });
        }
        return el.naturalWidth;
      });
      expect(naturalWidth).toBeGreaterThan(0);
      const video = await page.locator('video').evaluate(async (v: HTMLVideoElement) => {
        if (v.readyState < HTMLMediaElement.HAVE_CURRENT_DATA) {
          v.preload = 'auto';
          await new Promise((resolve, reject) => {
            v.addEventListener('loadeddata', resolve, { once: true });
            v.addEventListener('error', () => reject(new Error(`video error ${v.error?.code}`)), { once: true });
            v.load();
          });
        }
        v.muted = true;
        await v.play();
        return { readyState: v.readyState, duration: v.duration, width: v.videoWidth };
      });
      expect(video.readyState).toBeGreaterThanOrEqual(2);
      expect(video.width).toBe(320);
      expect(video.duration).toBeGreaterThan(0.5);
      expect(await textOf(page, 'pre.logs')).toMatch(/INFO\s+checkout page opened/);
      expect(await textOf(page, '.verdict')).toBe('passed');
      expect(violations).toEqual([]);
      expect(await seriousA11yViolations(page)).toEqual([]);
      await saveScreenshot(page, `console-result-browser-${scheme}`);
      if (scheme === 'dark') {
        const api = await context.newPage();
        await api.goto(apiPage);
        await saveScreenshot(api, 'console-result-api-dark');
      }
      await context.close();
    }
  });

  it('serves an artifact in byte ranges, for a video player that seeks', async () => {
    const cookie = await consoleCookieHeader(h.url, owner);
    const whole = await fetch(screenshotUrl, { headers: { cookie } });
    expect(whole.status).toBe(200);
    expect(whole.headers.get('accept-ranges')).toBe('bytes');
    const bytes = Buffer.from(await whole.arrayBuffer());
    const part = await fetch(screenshotUrl, { headers: { cookie, range: 'bytes=8-23' } });
    expect(part.status).toBe(206);
    expect(part.headers.get('content-range')).toBe(`bytes 8-23/${bytes.length}`);
    expect(Buffer.from(await part.arrayBuffer())).toEqual(bytes.subarray(8, 24));
    const tail = await fetch(screenshotUrl, { headers: { cookie, range: 'bytes=-4' } });
    expect(Buffer.from(await tail.arrayBuffer())).toEqual(bytes.subarray(bytes.length - 4));
    const outside = await fetch(screenshotUrl, { headers: { cookie, range: `bytes=${bytes.length}-` } });
    expect(outside.status).toBe(416);
    expect(outside.headers.get('content-range')).toBe(`bytes */${bytes.length}`);
  });

  it("shows a TCP result's phases and the data the server sent, and a DNS result's answer", async () => {
    const tcp: TcpCheckResult = {
      request: { hostname: 'mail.acme.test', port: 25, ipFamily: 'IPv4', data: null },
      response: {
        data: '220 mail.acme.test ESMTP',
        dataTruncated: false,
        bytesReceived: 24,
        remoteAddress: '127.0.0.1',
        remotePort: 25,
        family: 'IPv4',
        timingPhases: { dns: 2, connect: 3, data: 40, total: 45 },
      },
      assertions: [
        {
          source: 'RESPONSE_DATA',
          comparison: 'CONTAINS',
          property: '',
          target: 'ESMTP',
          actual: '220 mail.acme.test ESMTP',
          passed: true,
        },
      ],
      requestError: null,
    };
    const dns: DnsCheckResult = {
      request: { query: 'acme.test', recordType: 'A', nameServer: '127.0.0.1', port: 53, protocol: 'UDP' },
      response: {
        rcode: 'NOERROR',
        answers: [{ name: 'acme.test', type: 'A', ttl: 300, data: '192.0.2.7' }],
        authorities: [],
        additionals: [],
        textAnswer: 'acme.test. 300 IN A 192.0.2.7',
        flags: { authoritative: true, truncated: false, recursionDesired: true, recursionAvailable: false },
        server: { address: '127.0.0.1', port: 53 },
        protocol: 'UDP',
        fellBackToTcp: false,
        timingPhases: { dns: 0, query: 4, total: 4 },
      },
      assertions: [],
      requestError: null,
    };
    const tcpPage = resultPageUrl(
      h,
      owner.check.id,
      await h.submitResult(owner, await h.run(owner), { tcpCheckResult: tcp }),
    );
    const dnsPage = resultPageUrl(
      h,
      owner.check.id,
      await h.submitResult(owner, await h.run(owner), { dnsCheckResult: dns }),
    );
    const { context, page } = await openAs(owner, tcpPage);
    expect(await tableRows(page, '.waterfall')).toEqual(['DNS lookup | 2 ms', 'TCP connect | 3 ms', 'Data | 40 ms']);
    expect(await tableRows(page, '.assertions')).toEqual([
      'Passed | RESPONSE_DATA | contains | ESMTP | 220 mail.acme.test ESMTP',
    ]);
    expect(await textOf(page, '#response-heading + p')).toBe('24 bytes from 127.0.0.1:25');
    expect(await textOf(page, 'pre.response-body')).toBe('220 mail.acme.test ESMTP');
    await page.goto(dnsPage);
    expect(await tableRows(page, '.waterfall')).toEqual(['Resolve server | 0 ms', 'Query | 4 ms']);
    expect(await textOf(page, '#response-heading + p')).toBe('NOERROR from 127.0.0.1:53');
    expect(await textOf(page, 'pre.response-body')).toBe('acme.test. 300 IN A 192.0.2.7');
    await context.close();
  });

  it("answers another account's result and artifacts with the plain 404 page", async () => {
    const other = await h.tenant('Globex');
    for (const url of [
      apiPage,
      browserPage,
      screenshotUrl,
      `${browserPage}/artifacts/run.webm`,
      resultPageUrl(h, owner.check.id, '00000000-0000-0000-0000-000000000000'),
    ]) {
      const { context, page, response } = await openAs(other, url);
      expect(response?.status(), url).toBe(404);
      expect(await textOf(page, 'h1')).toBe('Not found');
      const text = await textOf(page, 'body');
      expect(text).not.toContain('Login flow');
      expect(text).not.toContain('Checkout');
      await context.close();
    }
  });
});
