/**
 * Subscribing from a public status page, in the real Chromium against the whole service on loopback
 * and a real SMTP server: double opt-in by email and by webhook, the confirm and unsubscribe links
 * (a GET only shows a button), RFC 8058 one-click unsubscribe, field errors, and accessibility.
 */

import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { verifyWebhookSignature } from '../../src/service/notify/webhook.ts';
import type { SubscribablePage } from '../../src/service/store/status-pages-types.ts';
import { confirmationPolicy, loadSubscriptionConfig } from '../../src/service/subscriptions/config.ts';
import { linkIn, mailHeader, mailText } from '../helpers/mail-message.ts';
import {
  type SmtpSink,
  startSmtpSink,
  startWebhookReceiver,
  type WebhookReceiver,
} from '../helpers/notify-receivers.ts';
import type { TestAccount } from '../helpers/public-api.ts';
import { startWebService, type WebService } from '../helpers/web-service.ts';
import { underHost } from '../support/web-browser.ts';
import { COLOR_SCHEMES, chromiumPerFile, expectAccessible, withPage } from '../support/web-page-tests.ts';

const PUBLIC_URL = 'http://status.outpost.test';
const WAIT_MS = 15_000;

interface Subscription {
  id: string;
  type: string;
  address: string;
  status: string;
}

describe('subscribing from a status page', () => {
  let smtp: SmtpSink;
  let receiver: WebhookReceiver;
  let web: WebService;
  const chromium = chromiumPerFile();
  let account: TestAccount;

  beforeAll(async () => {
    smtp = await startSmtpSink();
    receiver = await startWebhookReceiver();
    web = await startWebService({
      SMTP_URL: smtp.url,
      SMTP_FROM: 'status@acme.test',
      PUBLIC_URL,
      OUTBOUND_ALLOW: '127.0.0.1',
    });
    account = await web.newAccount();
  });
  afterAll(async () => {
    await web?.close();
    await smtp?.close();
    await receiver?.close();
  });

  /** A status page showing one service; resolves to the page's and the service's ids. */
  async function statusPage(url: string, extra: Record<string, unknown> = {}) {
    const service = await web.api<{ id: string; name: string }>(account, 'POST', '/v1/status-pages/services', {
      name: `API of ${url}`,
    });
    const page = await web.api<{ id: string }>(account, 'POST', '/v1/status-pages', {
      name: `Acme ${url}`,
      url,
      cards: [{ name: 'Core', services: [{ id: service.id }] }],
      ...extra,
    });
    return { pageId: page.id, service };
  }

  const subscriptions = (pageId: string) =>
    web.api<Subscription[]>(account, 'GET', `/v1/status-pages/${pageId}/subscriptions`);
  /** A link of PUBLIC_URL, opened at the service under test (same path, its loopback address). */
  const local = (link: string) => new URL(new URL(link).pathname, web.url).href;
  const mailTo = (address: string, subject: RegExp) =>
    smtp.mails.next(
      (m) => m.to.includes(address) && subject.test(mailHeader(m, 'Subject') ?? ''),
      WAIT_MS,
      `a mail to ${address} with subject ${subject}`,
    );

  async function accessible(page: Page, name: string): Promise<void> {
    expect(await page.locator('h1').count(), name).toBe(1);
    await expectAccessible(page, name);
  }

  async function submitForm(url: string, fields: Record<string, string>, origin: string | null = web.url) {
    return fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', ...(origin ? { origin } : {}) },
      body: new URLSearchParams(fields).toString(),
    });
  }

  for (const scheme of COLOR_SCHEMES) {
    it(`subscribes by email with double opt-in, notifies, and unsubscribes by the email's link (${scheme})`, async () => {
      const slug = `acme-${scheme}`;
      const { pageId, service } = await statusPage(slug);
      const address = `reader-${scheme}@acme.test`;
      await withPage(chromium.browser, scheme, async (page) => {
        expect((await page.goto(`${web.url}/status/${slug}/subscribe`))?.status()).toBe(200);
        await accessible(page, `subscribe-form-${scheme}`);
        await page.getByLabel('Email address').fill(address);
        await page.getByRole('button', { name: 'Subscribe by email' }).click();
        await expect.poll(() => page.locator('h1').textContent()).toBe('Check your inbox');
        await accessible(page, `subscribe-done-${scheme}`);

        const confirmation = await mailTo(address, /^Confirm your subscription to Acme acme-/);
        const confirmLink = linkIn(mailText(confirmation), `${PUBLIC_URL}/subscriptions/confirm/`);
        expect(confirmLink).toBeDefined();
        expect(mailHeader(confirmation, 'List-Unsubscribe')).toMatch(
          new RegExp(`^<${PUBLIC_URL}/subscriptions/unsubscribe/[A-Za-z0-9_-]{43}>$`),
        );
        expect(mailHeader(confirmation, 'List-Unsubscribe-Post')).toBe('List-Unsubscribe=One-Click');
        expect((await subscriptions(pageId)).map((s) => [s.address, s.status])).toEqual([[address, 'PENDING']]);

        // Opening the link (as a mail scanner would) only shows the button.
        expect((await page.goto(local(confirmLink as string)))?.status()).toBe(200);
        await accessible(page, `subscribe-confirm-${scheme}`);
        expect((await subscriptions(pageId))[0]?.status).toBe('PENDING');
        await page.getByRole('button', { name: 'Confirm subscription' }).click();
        await expect.poll(() => page.locator('h1').textContent()).toBe('Subscription confirmed');
        await accessible(page, `subscribe-confirmed-${scheme}`);
        expect((await subscriptions(pageId)).map((s) => [s.address, s.status])).toEqual([[address, 'VERIFIED']]);

        await web.api(account, 'POST', '/v1/status-pages/incidents', {
          name: `Checkout is slow (${scheme})`,
          severity: 'MAJOR',
          services: [{ ...service, accountId: account.accountId }],
          incidentUpdates: [
            { description: 'We are looking into it', status: 'INVESTIGATING', notifySubscribers: true },
          ],
        });
        const update = await mailTo(address, /Checkout is slow/);
        const unsubscribeLink = linkIn(mailText(update), `${PUBLIC_URL}/subscriptions/unsubscribe/`);
        expect(unsubscribeLink).toBeDefined();
        expect(mailHeader(update, 'List-Unsubscribe')).toBe(`<${unsubscribeLink}>`);
        expect(mailHeader(update, 'List-Unsubscribe-Post')).toBe('List-Unsubscribe=One-Click');

        expect((await page.goto(local(unsubscribeLink as string)))?.status()).toBe(200);
        await accessible(page, `subscribe-unsubscribe-${scheme}`);
        expect(await subscriptions(pageId)).toHaveLength(1);
        await page.getByRole('button', { name: 'Unsubscribe' }).click();
        await expect.poll(() => page.locator('h1').textContent()).toBe('Unsubscribed');
        await accessible(page, `subscribe-unsubscribed-${scheme}`);
        expect(await subscriptions(pageId)).toEqual([]);
        // A used link is dead.
        expect((await page.goto(local(confirmLink as string)))?.status()).toBe(404);
        await accessible(page, `subscribe-link-invalid-${scheme}`);
      });
    });

    it(`shows each field's error on the page, with a 400 (${scheme})`, async () => {
      const slug = `errors-${scheme}`;
      const { pageId } = await statusPage(slug);
      await withPage(chromium.browser, scheme, async (page) => {
        await page.goto(`${web.url}/status/${slug}/subscribe`);

        await page.getByLabel('Email address').fill('not-an-address');
        const [answer] = await Promise.all([
          page.waitForResponse((r) => r.request().method() === 'POST'),
          page.getByRole('button', { name: 'Subscribe by email' }).click(),
        ]);
        expect(answer.status()).toBe(400);
        await expect
          .poll(() => page.locator('#email-error').textContent())
          .toContain('Enter an email address like name@example.com');
        expect(await page.getByLabel('Email address').getAttribute('aria-invalid')).toBe('true');
        expect(await page.getByLabel('Email address').inputValue()).toBe('not-an-address');
        expect(await page.title()).toMatch(/^Error: /);
        await accessible(page, `subscribe-error-${scheme}`);

        await page.getByLabel('Webhook URL').fill('http://10.1.2.3/hook');
        await page.getByRole('button', { name: 'Subscribe by webhook' }).click();
        await expect
          .poll(() => page.locator('#url-error').textContent())
          .toContain('This URL cannot receive notifications: 10.1.2.3 is a private address');
        await page.getByLabel('Webhook URL').fill('ftp://example.com/');
        await page.getByRole('button', { name: 'Subscribe by webhook' }).click();
        await expect.poll(() => page.locator('#url-error').textContent()).toContain('Enter an http:// or https:// URL');
        expect(await subscriptions(pageId)).toEqual([]);
      });
    });
  }

  for (const scheme of COLOR_SCHEMES) {
    it(`subscribes a webhook: a signed confirmation with its confirmUrl, then VERIFIED once that is posted (${scheme})`, async () => {
      const slug = `hooked-${scheme}`;
      const { pageId } = await statusPage(slug);
      const hookUrl = `${receiver.url}?theme=${scheme}`;
      const secret = await withPage(chromium.browser, scheme, async (page) => {
        await page.goto(`${web.url}/status/${slug}/subscribe`);
        await page.getByLabel('Webhook URL').fill(hookUrl);
        await page.getByRole('button', { name: 'Subscribe by webhook' }).click();
        await expect.poll(() => page.locator('h1').textContent()).toBe('Check your endpoint');
        await accessible(page, `subscribe-webhook-done-${scheme}`);
        return (await page.locator('pre code').textContent()) ?? '';
      });
      expect(secret).toMatch(/^[A-Za-z0-9_-]{32}$/);

      const hook = await receiver.hooks.next(
        (h) => h.url.endsWith(`theme=${scheme}`),
        WAIT_MS,
        'the confirmation webhook',
      );
      expect(verifyWebhookSignature(secret, String(hook.headers['x-outpost-signature']), hook.body)).toBe(true);
      const body = JSON.parse(hook.body) as {
        type: string;
        statusPage: { id: string };
        confirmUrl: string;
        unsubscribeUrl: string;
      };
      expect(body).toMatchObject({ type: 'subscription.confirmation', statusPage: { id: pageId } });
      expect(body.confirmUrl.startsWith(`${PUBLIC_URL}/subscriptions/confirm/`)).toBe(true);
      expect((await subscriptions(pageId)).map((s) => [s.type, s.status])).toEqual([['WEBHOOK', 'PENDING']]);

      const confirmed = await fetch(local(body.confirmUrl), { method: 'POST' });
      expect(confirmed.status).toBe(200);
      expect((await subscriptions(pageId)).map((s) => [s.type, s.address, s.status])).toEqual([
        ['WEBHOOK', hookUrl, 'VERIFIED'],
      ]);
    });
  }

  it('removes unconfirmed subscriptions when their period runs out, and their links stop working', async () => {
    const { pageId } = await statusPage('late');
    await web.api(account, 'POST', `/v1/status-pages/${pageId}/subscriptions/bulk`, {
      subscriptions: [{ type: 'EMAIL', config: 'late@acme.test' }],
    });
    const confirmation = await mailTo('late@acme.test', /^Confirm your subscription/);
    const confirmLink = linkIn(mailText(confirmation), `${PUBLIC_URL}/subscriptions/confirm/`) as string;
    expect(mailText(confirmation)).toMatch(/The link works until \S+Z/);

    const hour = 3_600_000;
    // Past its expiry a link is refused even before a sweep removed the subscription.
    const token = new URL(confirmLink).pathname.split('/').pop() as string;
    expect(await web.service.store.subscriptions.confirm(token, new Date(Date.now() + 49 * hour))).toBeUndefined();
    expect(await web.service.subscriptionExpiry.sweep(new Date(Date.now() + 47 * hour))).toBe(0);
    expect((await subscriptions(pageId)).map((s) => s.status)).toEqual(['PENDING']);
    expect(await web.service.subscriptionExpiry.sweep(new Date(Date.now() + 49 * hour))).toBe(1);
    expect(await subscriptions(pageId)).toEqual([]);
    const page = await fetch(local(confirmLink));
    expect(page.status).toBe(404);
    expect(await page.text()).toContain('This link is not valid');
  });

  it('resends the confirmation to an address that subscribes again, at most once per SUBSCRIPTION_RESEND_MINUTES, without a second subscription', async () => {
    const { pageId } = await statusPage('again');
    // The first subscription, made eleven minutes ago (the store judges by the clock it is given).
    const target = await web.service.store.statusPageReads.findByAddress('url', 'again');
    const past = confirmationPolicy(loadSubscriptionConfig({}), new Date(Date.now() - 11 * 60_000));
    const input = { type: 'EMAIL' as const, address: 'again@acme.test', secret: null };
    expect(await web.service.store.subscriptions.subscribe(target as SubscribablePage, input, past)).toBe('created');
    const form = `${web.url}/status/again/subscribe`;
    for (let i = 0; i < 3; i += 1)
      expect((await submitForm(form, { channel: 'email', email: 'Again@acme.test' })).status).toBe(200);
    const api = await web.api(account, 'POST', `/v1/status-pages/${pageId}/subscriptions/bulk`, {
      subscriptions: [{ type: 'EMAIL', config: 'AGAIN@acme.test' }],
    });
    expect(api).toMatchObject({ created: 0, skipped: 1, status: 'PENDING' });
    // A sentinel after the repeats: once it arrived and nothing is pending, every queued message went out.
    expect((await submitForm(form, { channel: 'email', email: 'sentinel@acme.test' })).status).toBe(200);
    await mailTo('sentinel@acme.test', /^Confirm/);
    await expect.poll(() => web.service.store.outbox.nextDueAt(), { timeout: WAIT_MS }).toBeNull();
    // The first confirmation, and one resend: the form's first repeat was past the interval, the rest were not.
    const confirmations = smtp.mails.items.filter((m) => m.to.includes('again@acme.test'));
    expect(confirmations).toHaveLength(2);
    const links = confirmations.map((m) => linkIn(mailText(m), `${PUBLIC_URL}/subscriptions/confirm/`));
    expect(new Set(links).size).toBe(2);
    expect((await subscriptions(pageId)).map((s) => [s.address, s.status])).toEqual([
      ['again@acme.test', 'PENDING'],
      ['sentinel@acme.test', 'PENDING'],
    ]);
    // The older email's link still confirms.
    expect((await fetch(local(links[0] as string), { method: 'POST' })).status).toBe(200);
    expect((await subscriptions(pageId))[0]?.status).toBe('VERIFIED');
  });

  it('refuses a form posted from another site, and limits how often one address posts to a page', async () => {
    const { pageId } = await statusPage('guarded');
    const form = `${web.url}/status/guarded/subscribe`;
    const evil = await submitForm(form, { channel: 'email', email: 'victim@acme.test' }, 'http://evil.test');
    expect(evil.status).toBe(403);
    expect(await evil.text()).toContain('This form can only be sent from its own page');
    expect((await submitForm(form, { channel: 'email', email: 'victim@acme.test' }, null)).status).toBe(403);
    expect(await subscriptions(pageId)).toEqual([]);

    const answers: number[] = [];
    for (let i = 0; i < 11; i += 1) answers.push((await submitForm(form, { channel: 'email', email: '' })).status);
    expect(answers).toEqual([...Array(10).fill(400), 429]);
    const limited = await submitForm(form, { channel: 'email', email: 'someone@acme.test' });
    expect(limited.status).toBe(429);
    expect(Number(limited.headers.get('retry-after'))).toBeGreaterThan(0);

    // Both refusals as a reader's browser shows them.
    for (const scheme of COLOR_SCHEMES) {
      await withPage(chromium.browser, scheme, async (page) => {
        await page.goto(form);
        await page.getByLabel('Email address').fill('reader@acme.test');
        await page.getByRole('button', { name: 'Subscribe by email' }).click();
        await expect.poll(() => page.locator('h1').textContent()).toBe('Too many requests');
        await accessible(page, `subscribe-too-many-${scheme}`);
        // A form on another origin (about:blank: Origin "null") that posts to the page.
        await page.goto('about:blank');
        await page.setContent(
          `<form method="post" action="${form}"><input name="email" value="victim@acme.test"><button>Go</button></form>`,
        );
        await page.getByRole('button', { name: 'Go' }).click();
        await expect.poll(() => page.locator('h1').textContent()).toBe('Form refused');
        await accessible(page, `subscribe-cross-site-${scheme}`);
      });
    }
    expect(await subscriptions(pageId)).toEqual([]);
  });

  it('serves the form at /subscribe of the page custom domain, and 404 for a page that is not there', async () => {
    const { pageId } = await statusPage('domained', { customDomain: 'status.acme.test' });
    await withPage(chromium.browser, 'light', async (page) => {
      const origin = underHost(web.url, 'status.acme.test');
      expect((await page.goto(`${origin}/subscribe`))?.status()).toBe(200);
      expect(await page.locator('h1').textContent()).toBe('Subscribe to Acme domained');
      expect(await page.getByRole('link', { name: 'Back to Acme domained' }).getAttribute('href')).toBe('/');
      await page.getByLabel('Email address').fill('domain@acme.test');
      await page.getByRole('button', { name: 'Subscribe by email' }).click();
      await expect.poll(() => page.locator('h1').textContent()).toBe('Check your inbox');
      expect((await subscriptions(pageId)).map((s) => s.address)).toEqual(['domain@acme.test']);
      expect((await page.goto(`${underHost(web.url, 'nobody.acme.test')}/subscribe`))?.status()).toBe(404);
      expect((await page.goto(`${web.url}/status/no-such-page/subscribe`))?.status()).toBe(404);
    });
  });

  it("opens a private page's form only to a reader who holds one of its keys, as the page itself", async () => {
    const { pageId } = await statusPage('hidden', { isPrivate: true });
    const { rawKey } = await web.api<{ rawKey: string }>(account, 'POST', `/v1/status-pages/${pageId}/keys`, {});
    await withPage(chromium.browser, 'light', async (page) => {
      expect((await page.goto(`${web.url}/status/hidden/subscribe`))?.status()).toBe(404);
      expect(
        (await submitForm(`${web.url}/status/hidden/subscribe`, { channel: 'email', email: 'eve@acme.test' })).status,
      ).toBe(404);
      // The key opens the page once and stays in a cookie scoped to it, which the form's path is under.
      expect((await page.goto(`${web.url}/status/hidden?key=${encodeURIComponent(rawKey)}`))?.status()).toBe(200);
      expect((await page.goto(`${web.url}/status/hidden/subscribe`))?.status()).toBe(200);
      await page.getByLabel('Email address').fill('reader@acme.test');
      await page.getByRole('button', { name: 'Subscribe by email' }).click();
      await expect.poll(() => page.locator('h1').textContent()).toBe('Check your inbox');
      expect((await subscriptions(pageId)).map((s) => s.address)).toEqual(['reader@acme.test']);
    });
  });

  it('unsubscribes with the RFC 8058 one-click POST a mail provider sends, urlencoded or multipart', async () => {
    const { pageId, service } = await statusPage('one-click');
    await web.api(account, 'POST', `/v1/status-pages/${pageId}/subscriptions/bulk`, {
      subscriptions: [
        { type: 'EMAIL', config: 'oneclick@acme.test' },
        { type: 'EMAIL', config: 'multipart@acme.test' },
      ],
      autoVerify: true,
    });
    await web.api(account, 'POST', '/v1/status-pages/incidents', {
      name: 'Login fails',
      severity: 'CRITICAL',
      services: [{ ...service, accountId: account.accountId }],
      incidentUpdates: [{ description: 'Fixing', status: 'IDENTIFIED', notifySubscribers: true }],
    });
    const mail = await mailTo('oneclick@acme.test', /Login fails/);
    const target = /^<(.+)>$/.exec(mailHeader(mail, 'List-Unsubscribe') ?? '')?.[1] as string;
    const answer = await fetch(local(target), {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: 'List-Unsubscribe=One-Click',
    });
    expect(answer.status).toBe(200);
    expect((await subscriptions(pageId)).map((s) => s.address)).toEqual(['multipart@acme.test']);

    const other = await mailTo('multipart@acme.test', /Login fails/);
    const otherTarget = /^<(.+)>$/.exec(mailHeader(other, 'List-Unsubscribe') ?? '')?.[1] as string;
    const form = new FormData();
    form.set('List-Unsubscribe', 'One-Click');
    expect((await fetch(local(otherTarget), { method: 'POST', body: form })).status).toBe(200);
    expect(await subscriptions(pageId)).toEqual([]);
  });
});
