/**
 * Public status pages in the real Chromium: the page, an incident's page and the history in light and
 * dark themes (screenshots under test-artifacts/screenshots/), axe, theme colours, custom domains,
 * private pages with keys, paging, the Atom feed, and that no other account's page or incident shows.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import type { TestAccount } from '../helpers/public-api.ts';
import { webServicePerFile } from '../helpers/web-service.ts';
import { saveScreenshot, underHost } from '../support/web-browser.ts';
import { COLOR_SCHEMES, chromiumPerFile, expectAccessible, withPage } from '../support/web-page-tests.ts';
import { twoColourPalette } from '../support/web-theme-palette.ts';
import {
  addUpdate,
  daysAgo,
  type Made,
  type MadeService,
  makeIncident,
  makePage,
  makeService,
} from './status-page-fixture.ts';

describe('public status pages', () => {
  const t = webServicePerFile();
  const chromium = chromiumPerFile();
  let acme: TestAccount;
  let beta: TestAccount;
  const incidents: Record<string, Made> = {};

  beforeAll(async () => {
    acme = await t.web.newAccount('Acme');
    beta = await t.web.newAccount('Beta');
    const [api, site, db] = [
      await makeService(t.web, acme, 'API'),
      await makeService(t.web, acme, 'Website'),
      await makeService(t.web, acme, 'Database'),
    ];
    await makePage(t.web, acme, {
      name: 'Acme status',
      url: 'acme',
      customDomain: 'status.acme.test',
      description: 'How the Acme cloud is doing',
      redirectTo: 'https://acme.example/',
      cards: [
        { name: 'Core', services: [api, site] },
        { name: 'Data', services: [db] },
      ],
    });
    incidents.old = await makeIncident(t.web, acme, {
      name: 'Old outage',
      severity: 'CRITICAL',
      services: [site],
      status: 'RESOLVED',
      at: daysAgo(10),
    });
    incidents.slow = await makeIncident(t.web, acme, {
      name: 'Slow queries',
      severity: 'MINOR',
      services: [db],
      at: daysAgo(0, 0),
    });
    incidents.down = await makeIncident(t.web, acme, {
      name: 'Database down',
      severity: 'CRITICAL',
      services: [db],
      at: daysAgo(0, 0),
    });
    incidents.api = await makeIncident(t.web, acme, {
      name: 'API errors',
      severity: 'MAJOR',
      services: [api],
      description: 'We see errors on the API.',
      at: new Date(Date.now() - 60_000),
    });
    await addUpdate(t.web, acme, incidents.api, {
      description: 'Found the cause: a bad deploy.',
      status: 'IDENTIFIED',
    });

    const betaService = await makeService(t.web, beta, 'Beta API');
    await makePage(t.web, beta, {
      name: 'Beta status',
      url: 'beta',
      customDomain: 'status.beta.test',
      defaultTheme: 'DARK',
      whiteLabel: true,
      themeColors: { light: twoColourPalette('#FFFFEE', '#202020'), dark: twoColourPalette('#102030', '#F0F0F0') },
      cards: [{ name: 'Beta', services: [betaService] }],
    });
    incidents.beta = await makeIncident(t.web, beta, {
      name: 'Beta private trouble',
      severity: 'MAJOR',
      services: [betaService],
    });
  });

  /** A page of Acme's with one card, `cardName`, that shows one new service, `serviceName`; resolves to both. */
  async function pageOfOneService(
    serviceName: string,
    cardName: string,
    page: { name: string; url: string; [field: string]: unknown },
  ): Promise<{ service: MadeService; page: { id: string; url: string } }> {
    const service = await makeService(t.web, acme, serviceName);
    const made = await makePage(t.web, acme, { ...page, cards: [{ name: cardName, services: [service] }] });
    return { service, page: made };
  }

  it('shows each service state from its open incidents, open incidents with updates newest first, and a labelled 90-day bar, in light and dark', async () => {
    for (const scheme of COLOR_SCHEMES) {
      await withPage(chromium.browser, scheme, async (page) => {
        const res = await page.goto(`${t.web.url}/status/acme`);
        expect(res?.status()).toBe(200);
        expect(res?.headers()['content-security-policy']).toContain("style-src 'self'");
        await expect(page.locator('h1').textContent()).resolves.toBe('Acme status');
        await expect(page.locator('.sp-description').textContent()).resolves.toBe('How the Acme cloud is doing');
        const states = await page
          .locator('.sp-service')
          .evaluateAll((rows) =>
            rows.map(
              (r) => `${r.querySelector('.sp-service-name')?.textContent}: ${r.querySelector('.state')?.textContent}`,
            ),
          );
        // The highest severity among a service's open incidents decides (CRITICAL over MINOR on Database).
        expect(states).toEqual(['API: Partial outage', 'Website: Operational', 'Database: Major outage']);
        const apiIncident = page.locator('.sp-incident', { hasText: 'API errors' });
        expect(await apiIncident.locator('.sp-update-text').allInnerTexts()).toEqual([
          'Found the cause: a bad deploy.',
          'We see errors on the API.',
        ]);
        // A resolved incident is not open, but its day in the Website bar says what happened, in text.
        expect(await page.locator('.sp-incident', { hasText: 'Old outage' }).count()).toBe(0);
        const websiteDays = page.locator('.sp-service', { hasText: 'Website' }).locator('.sp-bar li');
        expect(await websiteDays.count()).toBe(90);
        expect(await websiteDays.nth(79).textContent()).toMatch(/: 1 incident, major outage: Old outage$/);
        expect(await websiteDays.nth(78).textContent()).toMatch(/: no incidents$/);
        // The day's text is hidden until its link has the keyboard's focus, then it shows beside the bar.
        const dayText = websiteDays.nth(79).locator('span');
        expect((await dayText.boundingBox())?.width).toBeLessThanOrEqual(1);
        await websiteDays.nth(79).locator('a').focus();
        expect((await dayText.boundingBox())?.width).toBeGreaterThan(100);
        expect(await websiteDays.nth(79).locator('a').getAttribute('href')).toBe(
          `/status/acme/incidents/${incidents.old?.id}`,
        );
        expect(await page.locator('a', { hasText: 'Subscribe to updates' }).getAttribute('href')).toBe(
          '/status/acme/subscribe',
        );
        expect(await page.locator('link[rel=alternate]').getAttribute('href')).toBe('/status/acme/feed.atom');
        expect(await page.locator('footer').textContent()).toContain('Powered by Outpost');
        const background = await page.evaluate(() => getComputedStyle(document.body).backgroundColor);
        expect(background).toBe(scheme === 'dark' ? 'rgb(13, 17, 23)' : 'rgb(255, 255, 255)');
        await expectAccessible(page, `status-page-${scheme}`);

        await page.locator('.sp-incident h3 a', { hasText: 'API errors' }).click();
        expect(new URL(page.url()).pathname).toBe(`/status/acme/incidents/${incidents.api?.id}`);
        await expect(page.locator('h1').textContent()).resolves.toBe('API errors');
        await expectAccessible(page, `status-page-incident-${scheme}`);

        await page.locator('nav a', { hasText: 'Incident history' }).click();
        await expect(page.locator('.sp-history h2').allInnerTexts()).resolves.toEqual([
          'API errors',
          'Database down',
          'Slow queries',
          'Old outage',
        ]);
        await expectAccessible(page, `status-page-history-${scheme}`);
      });
    }
  });

  it("applies a page's own theme colours from its stylesheet, its DARK default, and white label", async () => {
    await withPage(chromium.browser, 'light', async (page) => {
      await page.goto(`${t.web.url}/status/beta/`);
      expect(await page.locator('html').getAttribute('data-theme')).toBe('dark');
      const sheet = await page.locator('link[rel=stylesheet][href*="theme.css"]').getAttribute('href');
      expect(sheet).toMatch(/^\/status\/beta\/theme\.css\?v=/);
      expect(await page.evaluate(() => getComputedStyle(document.body).backgroundColor)).toBe('rgb(16, 32, 48)');
      expect(await page.locator('footer').textContent()).not.toContain('Powered by Outpost');
      await expectAccessible(page, 'status-page-themed-dark');
    });
  });

  it("shows the page's logo for the reader's colour scheme, linked to redirectTo, and its favicon", async () => {
    await pageOfOneService('Logo service', 'All', {
      name: 'Logo status',
      url: 'logo',
      logo: 'https://assets.acme.test/logo-light.svg',
      logoDark: 'https://assets.acme.test/logo-dark.svg',
      favicon: 'https://assets.acme.test/favicon.ico',
      redirectTo: 'https://acme.test/home',
    });
    for (const scheme of COLOR_SCHEMES) {
      await withPage(chromium.browser, scheme, async (page, context) => {
        // The logo host is not served here: its requests fail at once; the page's choice of URL is what is checked.
        await context.route('https://assets.acme.test/**', (route) => route.abort());
        await page.goto(`${t.web.url}/status/logo`);
        const logo = page.locator('header a picture img');
        expect(await logo.getAttribute('alt')).toBe('Logo status logo');
        expect(await logo.evaluate((img) => (img as HTMLImageElement).currentSrc)).toBe(
          `https://assets.acme.test/logo-${scheme}.svg`,
        );
        expect(await page.locator('header a', { has: page.locator('picture') }).getAttribute('href')).toBe(
          'https://acme.test/home',
        );
        expect(await page.locator('a.sp-back').textContent()).toBe('Back to acme.test');
        expect(await page.locator('link[rel=icon]').getAttribute('href')).toBe('https://assets.acme.test/favicon.ico');
      });
    }
  });

  it('serves a page at / of its custom domain, with its sub-pages at the root, and never on another host', async () => {
    await withPage(chromium.browser, 'light', async (page) => {
      const domain = underHost(t.web.url, 'status.acme.test');
      expect((await page.goto(`${domain}/`))?.status()).toBe(200);
      await expect(page.locator('h1').textContent()).resolves.toBe('Acme status');
      expect(await page.locator('a', { hasText: 'Subscribe to updates' }).getAttribute('href')).toBe('/subscribe');
      await page.locator('nav a', { hasText: 'Incident history' }).click();
      expect(page.url()).toBe(`${domain}/history`);
      expect(await page.locator('.sp-history li').count()).toBe(4);
      expect((await page.goto(`${domain}/incidents/${incidents.api?.id}`))?.status()).toBe(200);
      await saveScreenshot(page, 'status-page-custom-domain');
      // Another account's domain does not show this account's incident; unknown hosts have no root sub-pages.
      expect(
        (await page.goto(`${underHost(t.web.url, 'status.beta.test')}/incidents/${incidents.api?.id}`))?.status(),
      ).toBe(404);
      expect((await page.goto(`${underHost(t.web.url, 'nobody.test')}/history`))?.status()).toBe(404);
      expect((await page.goto(`${underHost(t.web.url, 'nobody.test')}/`))?.status()).toBe(404);
      expect((await page.goto(`${t.web.url}/history`))?.status()).toBe(404);
    });
  });

  it("answers unknown pages and another account's incidents with the plain 404 page", async () => {
    for (const path of [
      '/status/nope',
      '/status/nope/history',
      `/status/beta/incidents/${incidents.api?.id}`,
      `/status/acme/incidents/${incidents.beta?.id}`,
    ]) {
      const res = await fetch(`${t.web.url}${path}`, { headers: { accept: 'text/html' } });
      expect(res.status, path).toBe(404);
      const text = await res.text();
      expect(text).toContain('There is no');
      expect(text).not.toMatch(/Beta private trouble|API errors|Acme status|Beta status/);
    }
  });

  it('keeps a private page closed without a key and opens it with one, for its links too, until the key is revoked', async () => {
    const { service, page: hidden } = await pageOfOneService('Internal', 'All', {
      name: 'Internal status',
      url: 'internal',
      isPrivate: true,
    });
    await makeIncident(t.web, acme, { name: 'Internal hiccup', severity: 'MEDIUM', services: [service] });
    const key = await t.web.api<{ id: string; rawKey: string }>(acme, 'POST', `/v1/status-pages/${hidden.id}/keys`);
    await withPage(chromium.browser, 'light', async (page, context) => {
      for (const path of [
        '/status/internal',
        '/status/internal/history',
        '/status/internal/feed.atom',
        '/status/internal?key=sp_wrong',
      ]) {
        const res = await page.goto(`${t.web.url}${path}`);
        expect(res?.status(), path).toBe(404);
        expect(await page.content()).not.toContain('Internal');
      }
      const opened = await page.goto(`${t.web.url}/status/internal?key=${encodeURIComponent(key.rawKey)}`);
      expect(opened?.status()).toBe(200);
      expect(page.url()).toBe(`${t.web.url}/status/internal`);
      await expect(page.locator('h1').textContent()).resolves.toBe('Internal status');
      const [cookie] = await context.cookies();
      expect(cookie).toMatchObject({
        name: 'outpost_status_key',
        path: '/status/internal',
        httpOnly: true,
        sameSite: 'Lax',
      });
      await page.locator('nav a', { hasText: 'Incident history' }).click();
      await expect(page.locator('.sp-history h2').allInnerTexts()).resolves.toEqual(['Internal hiccup']);
      await expectAccessible(page, 'status-page-private-opened');
      // The key opens this page only.
      expect((await page.goto(`${t.web.url}/status/acme?key=${encodeURIComponent(key.rawKey)}`))?.status()).toBe(200);
      // A feed reader keeps no cookie: the feed answers with the key in its address, no redirect.
      const feed = await fetch(`${t.web.url}/status/internal/feed.atom?key=${encodeURIComponent(key.rawKey)}`, {
        redirect: 'manual',
      });
      expect(feed.status).toBe(200);
      expect(await feed.text()).toContain('<title>Internal hiccup</title>');
      await t.web.api(acme, 'DELETE', `/v1/status-pages/${hidden.id}/keys/${key.id}`);
      expect((await page.goto(`${t.web.url}/status/internal`))?.status()).toBe(404);
      expect((await fetch(`${t.web.url}/status/internal/feed.atom?key=${encodeURIComponent(key.rawKey)}`)).status).toBe(
        404,
      );
    });
  });

  it('pages the incident history, newest first, with links to older and newest', async () => {
    const { service } = await pageOfOneService('Queue', 'Queue', { name: 'Queue status', url: 'queue' });
    for (let i = 0; i < 25; i++) {
      await makeIncident(t.web, acme, {
        name: `Queue incident ${i}`,
        severity: 'MINOR',
        services: [service],
        status: 'RESOLVED',
        at: daysAgo(30 - i),
      });
    }
    await withPage(chromium.browser, 'light', async (page) => {
      await page.goto(`${t.web.url}/status/queue/history`);
      const first = await page.locator('.sp-history h2').allInnerTexts();
      expect(first).toEqual(Array.from({ length: 20 }, (_, i) => `Queue incident ${24 - i}`));
      await page.locator('a', { hasText: 'Older incidents' }).click();
      expect(await page.locator('.sp-history h2').allInnerTexts()).toEqual([
        'Queue incident 4',
        'Queue incident 3',
        'Queue incident 2',
        'Queue incident 1',
        'Queue incident 0',
      ]);
      expect(await page.locator('a', { hasText: 'Older incidents' }).count()).toBe(0);
      await page.locator('a', { hasText: 'Newest incidents' }).click();
      expect(await page.locator('.sp-history h2').first().textContent()).toBe('Queue incident 24');
      expect((await fetch(`${t.web.url}/status/queue/history?before=bogus`)).status).toBe(400);
    });
  });

  it('publishes an Atom feed that an XML parser reads, linked to each incident page', async () => {
    const res = await fetch(`${t.web.url}/status/acme/feed.atom`);
    expect(res.headers.get('content-type')).toMatch(/^application\/atom\+xml/);
    const xml = await res.text();
    const parsed = await withPage(chromium.browser, 'light', (page) =>
      page.evaluate((text) => {
        const doc = new DOMParser().parseFromString(text, 'application/xml');
        const ns = 'http://www.w3.org/2005/Atom';
        const one = (el: Element, name: string) => el.getElementsByTagNameNS(ns, name)[0];
        return {
          error: doc.getElementsByTagName('parsererror').length,
          root: `${doc.documentElement.namespaceURI} ${doc.documentElement.localName}`,
          feed: ['id', 'title', 'updated', 'author'].map((n) => Boolean(one(doc.documentElement, n))),
          entries: [...doc.getElementsByTagNameNS(ns, 'entry')].map((e) => ({
            title: one(e, 'title')?.textContent,
            id: one(e, 'id')?.textContent,
            updated: Number.isNaN(Date.parse(one(e, 'updated')?.textContent ?? '')),
            link: one(e, 'link')?.getAttribute('href'),
          })),
        };
      }, xml),
    );
    expect(parsed.error).toBe(0);
    expect(parsed.root).toBe('http://www.w3.org/2005/Atom feed');
    expect(parsed.feed).toEqual([true, true, true, true]);
    expect(parsed.entries.map((e) => e.title)).toEqual(['API errors', 'Database down', 'Slow queries', 'Old outage']);
    const api = parsed.entries[0];
    expect(api).toMatchObject({
      id: `urn:uuid:${incidents.api?.id}`,
      updated: false,
      link: `${t.web.url}/status/acme/incidents/${incidents.api?.id}`,
    });
    expect((await fetch(api?.link ?? '')).status).toBe(200);
  });
});
