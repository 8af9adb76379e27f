/**
 * The real headless Chromium (Debian's package) driven by playwright-core, for tests of the service's
 * pages: accessibility with axe-core, and screenshots kept under test-artifacts/screenshots/ so a
 * reviewer can look at every page a run rendered.
 */
import { mkdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import { type Browser, type BrowserContext, chromium, type Page } from 'playwright-core';

const require = createRequire(import.meta.url);
const AXE_SOURCE = readFileSync(require.resolve('axe-core/axe.min.js'), 'utf8');
export const SCREENSHOT_DIR = path.resolve('test-artifacts/screenshots');

/**
 * Playwright makes its profile and artifacts folders in os.tmpdir() while it launches, and Chromium
 * its own under the TMPDIR it inherits. These go to a folder of their own, not /tmp, so that
 * test/agent/browser-cleanup.test.ts, which looks for folders a check's browser left in /tmp, never
 * counts the ones of a page test running beside it.
 */
const BROWSER_TMPDIR = path.join(os.tmpdir(), 'outpost-page-tests');

export async function launchChromium(): Promise<Browser> {
  mkdirSync(BROWSER_TMPDIR, { recursive: true, mode: 0o700 });
  const tmpdir = process.env.TMPDIR;
  process.env.TMPDIR = BROWSER_TMPDIR;
  try {
    return await chromium.launch({
      executablePath: process.env.CHROMIUM_PATH ?? '/usr/bin/chromium',
      // Root in CI: Chromium's own sandbox needs user namespaces it may not have there.
      // Every *.test name (a reserved TLD) resolves to loopback, so a custom domain reaches the service
      // under test with its own Host header: `http://status.acme.test:<port>/`.
      args: ['--no-sandbox', '--host-resolver-rules=MAP *.test 127.0.0.1'],
    });
  } finally {
    if (tmpdir === undefined) delete process.env.TMPDIR;
    else process.env.TMPDIR = tmpdir;
  }
}

/** The service's URL under another host name (a *.test name, which launchChromium maps to loopback). */
export function underHost(serviceUrl: string, host: string): string {
  const url = new URL(serviceUrl);
  url.hostname = host;
  return url.origin;
}

/** A context with the colour scheme a page's AUTO theme follows. */
export async function newContext(
  browser: Browser,
  colorScheme: 'light' | 'dark' = 'light',
  extra: Parameters<Browser['newContext']>[0] = {},
): Promise<BrowserContext> {
  return browser.newContext({ colorScheme, ...extra });
}

export interface AxeViolation {
  id: string;
  impact: string | null;
  help: string;
  nodes: { target: unknown[]; html: string }[];
}

/** axe-core's serious and critical violations on the page as it is now (an empty list passes). */
export async function seriousA11yViolations(page: Page): Promise<AxeViolation[]> {
  // Injected through the DevTools protocol, so the page's Content-Security-Policy does not block it.
  await page.addScriptTag({ content: AXE_SOURCE }).catch(async () => page.evaluate(AXE_SOURCE));
  const result = (await page.evaluate(async () => {
    const axe = (
      globalThis as unknown as { axe: { run(ctx: unknown, opts: unknown): Promise<{ violations: AxeViolation[] }> } }
    ).axe;
    return axe.run(document, { resultTypes: ['violations'] });
  })) as { violations: AxeViolation[] };
  return result.violations
    .filter((v) => v.impact === 'serious' || v.impact === 'critical')
    .map((v) => ({
      id: v.id,
      impact: v.impact,
      help: v.help,
      nodes: v.nodes.map((n) => ({ target: n.target, html: n.html })),
    }));
}

/** Saves a full-page screenshot as test-artifacts/screenshots/<name>.png and returns its path. */
export async function saveScreenshot(page: Page, name: string): Promise<string> {
  mkdirSync(SCREENSHOT_DIR, { recursive: true });
  const file = path.join(SCREENSHOT_DIR, `${name.replace(/[^a-z0-9._-]+/gi, '-')}.png`);
  await page.screenshot({ path: file, fullPage: true });
  return file;
}
