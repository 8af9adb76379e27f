/**
 * The operator console in the real headless Chromium: sign in, the checks list and its filters, a
 * check's page, live updates, private locations, alerts, sign-out, cookies, accessibility and
 * screenshots of every page in both themes.
 */
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  type ConsoleTenant,
  consoleTenant,
  createApiCheck,
  leaseNextRun,
  runCheck,
} from '../helpers/console-fixture.ts';
import { startWebhookReceiver, type WebhookReceiver } from '../helpers/notify-receivers.ts';
import type { TestAccount } from '../helpers/public-api.ts';
import { webServicePerFile } from '../helpers/web-service.ts';
import { launchChromium, newContext, saveScreenshot, seriousA11yViolations } from '../support/web-browser.ts';

describe('operator console in a browser', () => {
  // The alert webhook goes to a receiver on loopback.
  const t = webServicePerFile({ OUTBOUND_ALLOW: '127.0.0.1' });
  let browser: Browser;
  let receiver: WebhookReceiver;
  let tenant: ConsoleTenant;
  const checks: Record<'homepage' | 'login' | 'billing', string> = { homepage: '', login: '', billing: '' };

  beforeAll(async () => {
    browser = await launchChromium();
    tenant = await consoleTenant(t.web, 'Acme', 'acme-office');
    receiver = await startWebhookReceiver();
    const channel = await t.web.api<{ id: number }>(tenant.account, 'POST', '/v1/alert-channels', {
      type: 'WEBHOOK',
      config: { name: 'ops hook', url: receiver.url },
    });
    checks.homepage = (
      await createApiCheck(t.web, tenant, 'Homepage', { tags: ['web', 'prod'], firstResult: { responseTime: 120 } })
    ).id;
    checks.login = (
      await createApiCheck(t.web, tenant, 'Login API', {
        tags: ['prod'],
        firstResult: { responseTime: 300 },
        body: { alertChannelSubscriptions: [{ alertChannelId: channel.id, activated: true }] },
      })
    ).id;
    checks.billing = (
      await createApiCheck(t.web, tenant, 'Billing', {
        tags: ['billing'],
        firstResult: { responseTime: 2400, isDegraded: true },
      })
    ).id;
    for (const responseTime of [180, 90, 150]) await runCheck(t.web, tenant, checks.homepage, { responseTime });
    await runCheck(t.web, tenant, checks.login, {
      responseTime: 450,
      hasFailures: true,
      error: 'Expected status 200, got 503',
    });
  });
  afterAll(async () => {
    await browser?.close();
    await receiver?.close();
  });

  const url = (path: string) => `${t.web.url}${path}`;

  async function signIn(page: Page, account: TestAccount): Promise<void> {
    await page.goto(url('/app'));
    expect(new URL(page.url()).pathname).toBe('/app/sign-in');
    await page.getByLabel('Account id').fill(account.accountId);
    await page.getByLabel('API key').fill(account.apiKey);
    await Promise.all([page.waitForURL(url('/app/checks')), page.getByRole('button', { name: 'Sign in' }).click()]);
  }

  async function signedInPage(scheme: 'light' | 'dark' = 'light'): Promise<{ context: BrowserContext; page: Page }> {
    const context = await newContext(browser, scheme);
    const page = await context.newPage();
    await signIn(page, tenant.account);
    return { context, page };
  }

  const rowNames = (page: Page) => page.locator('table.checks tbody th[scope="row"] > a').allTextContents();

  it('signs in, lists every check with state, type, locations, last run and a sparkline, and filters them', async () => {
    const { context, page } = await signedInPage();
    expect(await rowNames(page)).toEqual(['Homepage', 'Login API', 'Billing']);
    const homepage = page.locator('tbody tr', { hasText: 'Homepage' });
    expect(await homepage.locator('td').allTextContents()).toEqual([
      'Passing',
      'API',
      'Acme office',
      expect.stringMatching(/^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC$/),
      '',
    ]);
    expect(await homepage.locator('svg.sparkline').getAttribute('aria-label')).toBe(
      'Response times of the last 4 runs: 90 to 180 ms, latest 150 ms',
    );
    expect(await homepage.locator('svg.sparkline polyline').getAttribute('points')).toMatch(
      /^(\d+\.\d,\d+\.\d ){3}\d+\.\d,\d+\.\d$/,
    );
    expect(await page.locator('tbody tr', { hasText: 'Login API' }).locator('td').first().textContent()).toBe(
      'Failing',
    );

    await page.getByLabel('Tag').selectOption('prod');
    await Promise.all([page.waitForURL(/tag=prod/), page.getByRole('button', { name: 'Filter' }).click()]);
    expect(await rowNames(page)).toEqual(['Homepage', 'Login API']);
    await page.getByLabel('State').selectOption('failing');
    await Promise.all([page.waitForURL(/state=failing/), page.getByRole('button', { name: 'Filter' }).click()]);
    expect(await rowNames(page)).toEqual(['Login API']);
    await page.goto(url('/app/checks?type=TCP'));
    expect(await page.locator('tbody').textContent()).toBe('No check matches these filters.');
    await context.close();
  });

  it('is usable with the keyboard: the skip link first, then the sections', async () => {
    const { context, page } = await signedInPage();
    await page.keyboard.press('Tab');
    expect(await page.evaluate(() => document.activeElement?.textContent)).toBe('Skip to content');
    await page.keyboard.press('Enter');
    expect(new URL(page.url()).hash).toBe('#main');
    await page.keyboard.press('Tab');
    expect(await page.evaluate(() => document.activeElement?.id)).toBe('filter-tag');
    await context.close();
  });

  it("opens a check: the settings it runs with and its result history, linking to each result's page", async () => {
    const { context, page } = await signedInPage();
    await Promise.all([
      page.waitForURL(url(`/app/checks/${checks.login}`)),
      page.getByRole('link', { name: 'Login API' }).click(),
    ]);
    expect(await page.locator('h1').textContent()).toBe('Login API');
    expect(await page.locator('dl.settings').textContent()).toContain('every 1440 minutes');
    const results = page.locator('table.results tbody tr');
    expect(await results.count()).toBe(2);
    expect(await results.first().locator('td').first().textContent()).toBe('Failed Expected status 200, got 503');
    const stored = await t.web.service.store.results.list(tenant.account.accountId, checks.login, { limit: 10 });
    expect(await results.first().locator('a').getAttribute('href')).toBe(
      `/app/checks/${checks.login}/results/${stored.entries[0]?.id}`,
    );
    await page.locator('summary').click();
    expect(JSON.parse((await page.locator('pre').textContent()) ?? '{}')).toMatchObject({
      id: checks.login,
      name: 'Login API',
      tags: ['prod'],
    });
    await context.close();
  });

  it("shows a new result on the checks list and the check's page without a reload", async () => {
    const { context, page } = await signedInPage();
    await page.evaluate(() => {
      (window as unknown as { notReloaded: boolean }).notReloaded = true;
    });
    const billingState = page.locator('tbody tr', { hasText: 'Billing' }).locator('td').first();
    expect(await billingState.textContent()).toBe('Degraded');
    const checkTab = await context.newPage();
    await checkTab.goto(url(`/app/checks/${checks.billing}`));
    expect(await checkTab.locator('table.results tbody tr').count()).toBe(1);
    await runCheck(t.web, tenant, checks.billing, { responseTime: 200 });
    await billingState.filter({ hasText: 'Passing' }).waitFor({ timeout: 20_000 });
    await checkTab.locator('table.results tbody tr').nth(1).waitFor({ timeout: 20_000 });
    expect(await checkTab.locator('table.results tbody tr td:nth-child(2)').allTextContents()).toEqual([
      'Passed',
      'Degraded',
    ]);
    expect(
      await page.locator('tbody tr', { hasText: 'Billing' }).locator('svg.sparkline').getAttribute('aria-label'),
    ).toContain('last 2 runs');
    expect(await page.evaluate(() => (window as unknown as { notReloaded?: boolean }).notReloaded)).toBe(true);
    await context.close();
  });

  it('lists private locations with their agents online, jobs running, queue depth and error reports', async () => {
    const store = t.web.service.store;
    // One run held by the agent, one waiting in the queue.
    const billing = await store.checks.get(tenant.account.accountId, checks.billing);
    const homepage = await store.checks.get(tenant.account.accountId, checks.homepage);
    if (!billing || !homepage) throw new Error('checks missing');
    await t.web.service.dispatcher.enqueue(billing, tenant.location.id, Date.now());
    expect((await leaseNextRun(t.web, tenant))?.check.id).toBe(checks.billing);
    await t.web.service.dispatcher.enqueue(homepage, tenant.location.id, Date.now());
    await store.errorReports.insert(
      tenant.location.id,
      [{ message: 'Chromium crashed while starting', release: 'outpost-agent@0.1.0' }],
      new Date().toISOString(),
      100,
    );

    const { context, page } = await signedInPage();
    await page.getByRole('link', { name: 'Private locations' }).click();
    await page.waitForURL(url('/app/locations'));
    const section = page.locator('section', { hasText: 'Acme office' });
    expect(await section.textContent()).toContain('Queue depth: 1 run waiting');
    expect(await section.locator('table').first().locator('tbody td').allTextContents()).toEqual([
      '0.0.0-test',
      'APIruntimes 2026.04, 2025.04',
      '1',
      expect.stringMatching(/UTC$/),
    ]);
    expect(await section.locator('table').nth(1).locator('tbody td').allTextContents()).toEqual([
      'Chromium crashed while starting',
      'outpost-agent@0.1.0',
    ]);
    await context.close();
  });

  it('lists the alert history and the outcome of each notification, updating as it is delivered', async () => {
    const { context, page } = await signedInPage();
    await page.goto(url('/app/alerts'));
    const history = page.locator('table').first();
    expect(await history.locator('tbody tr', { hasText: 'Login API' }).locator('td').nth(1).textContent()).toBe(
      'ALERT_FAILURE',
    );
    await receiver.hooks.next(() => true, 20_000, 'the alert webhook');
    const notification = page.locator('table').nth(1).locator('tbody tr', { hasText: 'Login API' });
    await notification.filter({ hasText: 'delivered' }).waitFor({ timeout: 20_000 });
    expect(await notification.locator('td').allTextContents()).toEqual([
      'Login API',
      'ALERT_FAILURE',
      expect.stringMatching(/^WEBHOOK #\d+$/),
      expect.stringMatching(/^delivered \d{4}-/),
      '1',
      '',
    ]);
    await context.close();
  });

  it('sets the session cookie HttpOnly and SameSite=Strict for /app only', async () => {
    const { context } = await signedInPage();
    const session = (await context.cookies()).find((c) => c.name === 'outpost_console');
    expect(session).toMatchObject({ httpOnly: true, sameSite: 'Strict', path: '/app', secure: false });
    await context.close();
  });

  it("shows another account's session nothing of this one: its checks are 404 pages", async () => {
    const context = await newContext(browser);
    const page = await context.newPage();
    await signIn(page, await t.web.newAccount('Other'));
    expect(await page.locator('tbody').textContent()).toContain('No checks yet');
    await page.goto(url('/app/alerts'));
    expect(await page.locator('p.empty').allTextContents()).toEqual([
      expect.stringContaining('No alerts yet'),
      expect.stringContaining('No notifications yet'),
    ]);
    const res = await page.goto(url(`/app/checks/${checks.homepage}`));
    expect(res?.status()).toBe(404);
    expect(await page.locator('body').textContent()).not.toContain('Homepage');
    await context.close();
  });

  it('signs out: the old cookie then opens nothing', async () => {
    const { context, page } = await signedInPage();
    const cookie = (await context.cookies()).find((c) => c.name === 'outpost_console');
    await Promise.all([page.waitForURL(url('/app/sign-in')), page.getByRole('button', { name: 'Sign out' }).click()]);
    expect((await context.cookies()).some((c) => c.name === 'outpost_console')).toBe(false);
    const replay = await newContext(browser);
    if (cookie) await replay.addCookies([cookie]);
    const again = await replay.newPage();
    await again.goto(url('/app/checks'));
    expect(new URL(again.url()).pathname).toBe('/app/sign-in');
    await replay.close();
    await context.close();
  });

  it('passes axe on every page, in light and dark, with a screenshot of each', async () => {
    for (const scheme of ['light', 'dark'] as const) {
      const context = await newContext(browser, scheme);
      const page = await context.newPage();
      await page.goto(url('/app/sign-in'));
      expect(await seriousA11yViolations(page), `sign-in ${scheme}`).toEqual([]);
      await saveScreenshot(page, `console-sign-in-${scheme}`);
      await signIn(page, tenant.account);
      const pages = {
        checks: '/app/checks',
        check: `/app/checks/${checks.login}`,
        locations: '/app/locations',
        alerts: '/app/alerts',
      };
      for (const [name, path] of Object.entries(pages)) {
        await page.goto(url(path));
        expect(await seriousA11yViolations(page), `${name} ${scheme}`).toEqual([]);
        await saveScreenshot(page, `console-${name}-${scheme}`);
      }
      await context.close();
    }
  });
});
