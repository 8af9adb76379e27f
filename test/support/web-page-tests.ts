/**
 * What the tests of the service's pages share on top of web-browser.ts: one Chromium for a whole
 * file, a page in a context of its own that is closed however the test ends, and the check that
 * every page a test shows is accessible (with a screenshot kept for review).
 */
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, expect } from 'vitest';
import { launchChromium, newContext, saveScreenshot, seriousA11yViolations } from './web-browser.ts';

export type ColorScheme = 'light' | 'dark';

/** Both colour schemes, for tests that look at a page in each. */
export const COLOR_SCHEMES: readonly ColorScheme[] = ['light', 'dark'];

/** One Chromium for the whole file, launched before its tests and closed after them. */
export function chromiumPerFile(): { browser: Browser } {
  const state = {} as { browser: Browser };
  beforeAll(async () => {
    state.browser = await launchChromium();
  });
  afterAll(async () => {
    await state.browser?.close();
  });
  return state;
}

/** Runs `use` on a new page of a new context with `colorScheme`, then closes the context. */
export async function withPage<T>(
  browser: Browser,
  colorScheme: ColorScheme,
  use: (page: Page, context: BrowserContext) => Promise<T>,
): Promise<T> {
  const context = await newContext(browser, colorScheme);
  try {
    return await use(await context.newPage(), context);
  } finally {
    await context.close();
  }
}

/** axe finds no serious or critical violation on the page as it is now; its screenshot is saved as `name`. */
export async function expectAccessible(page: Page, name: string): Promise<void> {
  expect(await seriousA11yViolations(page), name).toEqual([]);
  await saveScreenshot(page, name);
}
