/**
 * Set-up of the console result page's browser tests: the service with an agent's artifact uploads
 * and results at hand, the system Chromium, the owner's account and a temp directory for the file's
 * tests; and a signed-in browser context to open the pages in.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { Browser, BrowserContext } from 'playwright-core';
import { afterAll, beforeAll } from 'vitest';
import type { CheckType } from '../../src/shared/checks/types.ts';
import type { ArtifactServiceHarness, ArtifactTenant } from '../helpers/artifact-service.ts';
import { cspViolations, startResultPages } from '../helpers/console-results.ts';
import { consoleSessionCookies } from '../helpers/console-session-cookies.ts';
import { launchChromium, newContext } from './web-browser.ts';

export interface ResultPages {
  h: ArtifactServiceHarness;
  browser: Browser;
  /** The account "Acme", whose check's results the tests show. */
  owner: ArtifactTenant;
  tmp: string;
}

/**
 * Before the file's tests: a temp directory (named from `tmpPrefix`), the service, Chromium and the
 * owner with a check of `checkType`; after them, all closed and removed. Read the fields inside hooks
 * and tests (they are set in beforeAll); hooks the file adds after this call run after its set-up.
 */
export function resultPagesInChromium(tmpPrefix: string, checkType?: CheckType): ResultPages {
  const pages = {} as ResultPages;
  beforeAll(async () => {
    pages.tmp = mkdtempSync(path.join(tmpdir(), tmpPrefix));
    pages.h = await startResultPages();
    pages.browser = await launchChromium();
    pages.owner = await pages.h.tenant('Acme', checkType);
  });
  afterAll(async () => {
    await pages.browser?.close();
    await pages.h?.close();
    if (pages.tmp) rmSync(pages.tmp, { recursive: true, force: true });
  });
  return pages;
}

/** A browser context signed in to the console as `account`. */
export async function signedInContext(
  pages: ResultPages,
  account: ArtifactTenant,
  scheme: 'light' | 'dark' = 'light',
): Promise<BrowserContext> {
  const context = await newContext(pages.browser, scheme);
  await context.addCookies(await consoleSessionCookies(pages.h.url, account));
  return context;
}

/** Opens `url` in a new context signed in as `account`, collecting the page's CSP violations from the start. */
export async function openSignedIn(
  pages: ResultPages,
  account: ArtifactTenant,
  url: string,
  scheme: 'light' | 'dark' = 'light',
) {
  const context = await signedInContext(pages, account, scheme);
  const page = await context.newPage();
  const violations = cspViolations(page);
  const response = await page.goto(url);
  return { context, page, response, violations };
}
