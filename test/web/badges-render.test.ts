/**
 * Badges in the real Chromium: each style and theme parses as XML (the browser's own parser), its
 * boxes are as wide as the font draws their text, and a grid of every style, theme and status is
 * saved as screenshots for reviewers (test-artifacts/screenshots/badges-*.png).
 */
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BADGE_THEMES } from '../../src/service/badges/palette.ts';
import { BADGE_STYLES } from '../../src/service/badges/svg.ts';
import { webServicePerFile } from '../helpers/web-service.ts';
import { launchChromium, newContext, saveScreenshot } from '../support/web-browser.ts';
import { createCheck, enableBadges, type Outcome, recordResult } from './badge-fixtures.ts';

const t = webServicePerFile();
let browser: Browser;
/** Check ids by the status their badge shows. */
const checks: Record<string, string> = {};

beforeAll(async () => {
  browser = await launchChromium();
  const acme = await t.web.newAccount('Acme');
  await enableBadges(t.web, acme);
  const statuses: Array<[string, Outcome | null, Record<string, unknown>]> = [
    ['passing', { responseTime: 87 }, {}],
    ['degraded', { isDegraded: true, responseTime: 2400 }, {}],
    ['failing', { hasFailures: true, responseTime: 30000 }, {}],
    ['no data', null, {}],
    ['deactivated', null, { activated: false }],
  ];
  for (const [status, outcome, extra] of statuses) {
    const id = await createCheck(t.web, acme, `Überprüfung déjà ${status}`, extra);
    if (outcome) await recordResult(t.web, acme, id, outcome);
    checks[status] = id;
  }
});
afterAll(async () => {
  await browser?.close();
});

interface Parsed {
  error: string | null;
  root: string;
  texts: Array<{ text: string; declared: number; drawn: number }>;
}

describe('badges in Chromium', () => {
  it('parse as XML in every style and theme, with each text as wide as its box says', async () => {
    const context = await newContext(browser);
    const page = await context.newPage();
    for (const style of BADGE_STYLES) {
      for (const theme of BADGE_THEMES) {
        const url = `${t.web.url}/v1/badges/checks/${checks.degraded}?style=${style}&theme=${theme}&responseTime=true`;
        const res = await page.goto(url);
        expect(res?.headers()['content-type']).toBe('image/svg+xml; charset=utf-8');
        const source = (await res?.text()) ?? '';
        const parsed = (await page.evaluate((svg) => {
          const doc = new DOMParser().parseFromString(svg, 'image/svg+xml');
          const error = doc.querySelector('parsererror')?.textContent ?? null;
          // The live document (the badge as navigated to) measures what the font really draws.
          // badge-maker's shadow copies sit in aria-hidden groups; its social style hides its whole
          // text group (the svg's aria-label names it), so there only the copies marked one by one are skipped.
          const visible = [...document.querySelectorAll('text:not([aria-hidden])')].filter(
            (node) => node.closest('[aria-hidden]')?.querySelector('rect') || !node.closest('[aria-hidden]'),
          );
          const texts = visible.map((node) => {
            const text = node as SVGTextElement;
            const declared = Number(text.getAttribute('textLength'));
            text.removeAttribute('textLength');
            return { text: text.textContent ?? '', declared, drawn: text.getComputedTextLength() };
          });
          return { error, root: doc.documentElement.localName, texts };
        }, source)) as Parsed;
        const where = `${style}/${theme}`;
        expect(parsed.error, where).toBeNull();
        expect(parsed.root, where).toBe('svg');
        expect(
          parsed.texts.map((x) => x.text.toLowerCase()),
          where,
        ).toEqual(['überprüfung déjà degraded', 'degraded · 2400 ms']);
        // for-the-badge spaces its letters out through textLength itself (as shields.io does), so only the
        // other styles' boxes are held to the width the font draws.
        if (style === 'for-the-badge') continue;
        for (const { text, declared, drawn } of parsed.texts)
          expect(Math.abs(drawn - declared) / declared, `${where} "${text}"`).toBeLessThan(0.08);
      }
    }
    await context.close();
  });

  it('renders every status in every style and theme (screenshots)', async () => {
    for (const scheme of ['light', 'dark'] as const) {
      const context = await newContext(browser, scheme);
      const page = await context.newPage();
      const themes = scheme === 'light' ? ['default', 'light'] : ['default', 'dark'];
      const rows = Object.entries(checks).flatMap(([status, id]) =>
        themes.map((theme) => {
          const cells = BADGE_STYLES.map(
            (style) =>
              `<td><img alt="${status} ${style} ${theme}" src="${t.web.url}/v1/badges/checks/${id}?style=${style}&theme=${theme}&responseTime=${status === 'passing'}"></td>`,
          );
          return `<tr><th>${status} (${theme})</th>${cells.join('')}</tr>`;
        }),
      );
      const colours = scheme === 'light' ? 'background:#fff;color:#1f2328' : 'background:#0d1117;color:#e6edf3';
      await page.setContent(
        `<html><body style="${colours};font:13px sans-serif"><table cellpadding="6"><tr><th></th>${BADGE_STYLES.map((s) => `<th>${s}</th>`).join('')}</tr>${rows.join('')}</table></body></html>`,
        { waitUntil: 'load' },
      );
      const sizes = await page.$$eval('img', (imgs) =>
        imgs.map((img) => [(img as HTMLImageElement).naturalWidth, (img as HTMLImageElement).naturalHeight]),
      );
      expect(sizes).toHaveLength(Object.keys(checks).length * themes.length * BADGE_STYLES.length);
      // Every image loaded and drew at its declared size (a broken SVG has no natural size).
      for (const [width, height] of sizes) {
        expect(width).toBeGreaterThan(60);
        expect([18, 20, 28]).toContain(height);
      }
      await saveScreenshot(page, `badges-${scheme}`);
      await context.close();
    }
  });
});
