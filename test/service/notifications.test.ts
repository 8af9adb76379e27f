/**
 * Subscriber notifications end to end: a real service on an ephemeral loopback port, a real SMTP
 * server and a real webhook receiver. Covers who is notified, the signature, retries with backoff
 * (delivered once, same idempotency key on every attempt), email without SMTP_URL, and the
 * outbox surviving a restart.
 */
import { createHmac } from 'node:crypto';
import { rmSync } from 'node:fs';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createAccount } from '../../src/service/accounts.ts';
import { buildService, type Service } from '../../src/service/app.ts';
import { loadServiceConfig } from '../../src/service/config.ts';
import { retryDelayMs } from '../../src/service/notify/outbox-worker.ts';
import { verifyWebhookSignature } from '../../src/service/notify/webhook.ts';
import type { OutboxEntry } from '../../src/service/store/status-pages-types.ts';
import {
  type SmtpSink,
  startSmtpSink,
  startWebhookReceiver,
  type WebhookReceiver,
} from '../helpers/notify-receivers.ts';
import { first, tempDataDir } from '../helpers/public-api.ts';

const SECRET = 'whsec-0123456789abcdef';

let dataDir: string;
let smtp: SmtpSink;
let receiver: WebhookReceiver;
const services: Service[] = [];

beforeEach(async () => {
  dataDir = tempDataDir();
  smtp = await startSmtpSink();
  receiver = await startWebhookReceiver();
});
afterEach(async () => {
  for (const s of services.splice(0)) await s.stop();
  await receiver.close();
  await smtp.close();
  rmSync(dataDir, { recursive: true, force: true });
});

async function service(env: Record<string, string> = {}, { start = true } = {}) {
  const config = loadServiceConfig({
    DATA_DIR: dataDir,
    PORT: '0',
    HOST: '127.0.0.1',
    PUBLIC_URL: 'http://status.test',
    SMTP_URL: smtp.url,
    SMTP_FROM: 'Acme status <status@acme.test>',
    // Fast retries keep the test quick; the backoff shape itself is unit-tested below.
    NOTIFY_BACKOFF_BASE_MS: '20',
    NOTIFY_BACKOFF_MAX_MS: '80',
    // The receivers listen on loopback, which webhooks may not reach unless allowed.
    OUTBOUND_ALLOW: '127.0.0.1',
    ...env,
  });
  const svc = await buildService(config, { logger: false });
  services.push(svc);
  const base = start ? await svc.start() : '';
  return { svc, base };
}

/** A small client: real HTTP when the service listens, app.inject when it was not started. */
function client(svc: Service, base: string, headers: Record<string, string>) {
  return async <T>(method: string, path: string, body?: unknown): Promise<{ status: number; body: T }> => {
    if (!base) {
      const res = await svc.app.inject({
        method: method as 'GET',
        url: path,
        headers,
        ...(body === undefined ? {} : { payload: body as object }),
      });
      return { status: res.statusCode, body: (res.body ? res.json() : null) as T };
    }
    const res = await fetch(`${base}${path}`, {
      method,
      headers: { ...headers, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    const text = await res.text();
    return { status: res.status, body: (text ? JSON.parse(text) : null) as T };
  };
}

/**
 * An account with one service shown on a status page (subscribed by the given email and webhook,
 * verified) and a second page that does not show it (with its own subscriber).
 */
async function setup(
  svc: Service,
  base: string,
  subscribers: { email?: string; webhook?: boolean; webhookUrls?: string[]; pendingEmail?: string },
) {
  const { accountId, apiKey } = await createAccount(svc.store, 'Acme');
  const call = client(svc, base, { authorization: `Bearer ${apiKey}`, 'x-service-account': accountId });
  const api = (await call<{ id: string; name: string }>('POST', '/v1/status-pages/services', { name: 'API' })).body;
  const other = (await call<{ id: string }>('POST', '/v1/status-pages/services', { name: 'Other' })).body;
  const page = await call<{ id: string }>('POST', '/v1/status-pages', {
    name: 'Acme',
    url: 'acme',
    cards: [{ name: 'Core', services: [{ id: api.id }] }],
  });
  expect(page.status).toBe(201);
  const unrelated = await call<{ id: string }>('POST', '/v1/status-pages', {
    name: 'Other',
    url: 'other',
    cards: [{ name: 'Misc', services: [{ id: other.id }] }],
  });
  const verified = [
    ...(subscribers.email ? [{ type: 'EMAIL', config: subscribers.email }] : []),
    ...(subscribers.webhook
      ? [{ type: 'WEBHOOK', config: JSON.stringify({ url: receiver.url, secret: SECRET }) }]
      : []),
    ...(subscribers.webhookUrls ?? []).map((url) => ({
      type: 'WEBHOOK',
      config: JSON.stringify({ url, secret: SECRET }),
    })),
  ];
  if (verified.length > 0) {
    const bulk = await call('POST', `/v1/status-pages/${page.body.id}/subscriptions/bulk`, {
      subscriptions: verified,
      autoVerify: true,
    });
    expect(bulk.status).toBe(201);
  }
  if (subscribers.pendingEmail) {
    await call('POST', `/v1/status-pages/${page.body.id}/subscriptions/bulk`, {
      subscriptions: [{ type: 'EMAIL', config: subscribers.pendingEmail }],
    });
  }
  await call('POST', `/v1/status-pages/${unrelated.body.id}/subscriptions/bulk`, {
    subscriptions: [{ type: 'EMAIL', config: 'unrelated@acme.test' }],
    autoVerify: true,
  });
  const incident = (notify: boolean) =>
    call<{ id: string; incidentUpdates: { id: string }[] }>('POST', '/v1/status-pages/incidents', {
      name: 'Checkout is slow',
      severity: 'MAJOR',
      services: [{ ...api, accountId }],
      incidentUpdates: [{ description: 'We are looking into it', status: 'INVESTIGATING', notifySubscribers: notify }],
    });
  return { call, incident, accountId };
}

function nextEvent(
  svc: Service,
  event: 'delivered' | 'undeliverable' | 'retry' | 'failed',
  accept: (e: OutboxEntry) => boolean = () => true,
) {
  return new Promise<OutboxEntry>((resolve) => {
    const listener = (entry: OutboxEntry) => {
      if (!accept(entry)) return;
      svc.notifier.off(event, listener);
      resolve(entry);
    };
    svc.notifier.on(event, listener);
  });
}

describe('subscriber notifications', () => {
  it('emails and posts a signed webhook to the subscribers of pages showing the incident, once each', async () => {
    const { svc, base } = await service();
    const { incident, call } = await setup(svc, base, {
      email: 'ops@acme.test',
      webhook: true,
      pendingEmail: 'pending@acme.test',
    });
    const delivered = [
      nextEvent(svc, 'delivered', (e) => e.channel === 'EMAIL' && e.kind === 'incident'),
      nextEvent(svc, 'delivered', (e) => e.channel === 'WEBHOOK'),
    ];

    const created = await incident(true);
    expect(created.status).toBe(201);
    const updateId = first(created.body.incidentUpdates).id;
    const [emailEntry, hookEntry] = await Promise.all(delivered);

    // The PENDING subscriber gets its confirmation (double opt-in), never the incident.
    const mail = await smtp.mails.next((m) => m.to.includes('ops@acme.test'));
    expect(mail.to).toEqual(['ops@acme.test']);
    expect(mail.from).toBe('status@acme.test');
    expect(mail.raw).toMatch(/^Subject: \[INVESTIGATING\] Checkout is slow/m);
    expect(mail.raw).toContain('We are looking into it');
    // The Message-ID carries the delivery's idempotency key.
    expect(mail.raw).toMatch(new RegExp(`^Message-ID: <${emailEntry?.id}@status\\.test>`, 'im'));

    const hook = await receiver.hooks.next();
    expect(hook.headers['content-type']).toBe('application/json');
    expect(hook.headers['x-outpost-delivery']).toBe(hookEntry?.id);
    // The signature, checked independently of the service's own helper ...
    const match = /^t=(\d+),v1=([0-9a-f]{64})$/.exec(String(hook.headers['x-outpost-signature']));
    expect(match).not.toBeNull();
    const expected = createHmac('sha256', SECRET).update(`${match?.[1]}.${hook.body}`).digest('hex');
    expect(match?.[2]).toBe(expected);
    // ... and with it, which also refuses a tampered body or the wrong secret.
    expect(verifyWebhookSignature(SECRET, String(hook.headers['x-outpost-signature']), hook.body)).toBe(true);
    expect(verifyWebhookSignature(SECRET, String(hook.headers['x-outpost-signature']), `${hook.body} `)).toBe(false);
    expect(verifyWebhookSignature('another-secret-0000', String(hook.headers['x-outpost-signature']), hook.body)).toBe(
      false,
    );
    const payload = JSON.parse(hook.body);
    expect(payload).toMatchObject({
      id: hookEntry?.id,
      type: 'incident.update',
      incident: { id: created.body.id, name: 'Checkout is slow', severity: 'MAJOR', lastUpdateStatus: 'INVESTIGATING' },
      incidentUpdate: { id: updateId, description: 'We are looking into it', status: 'INVESTIGATING' },
      statusPages: [{ name: 'Acme', url: 'acme' }],
    });

    // Exactly two deliveries: not the PENDING subscriber, not the page that does not show the service.
    const entries = await svc.store.outbox.listForUpdate(updateId);
    expect(entries.map((e) => [e.channel, e.address, e.state, e.attempts])).toEqual([
      ['EMAIL', 'ops@acme.test', 'delivered', 1],
      ['WEBHOOK', receiver.url, 'delivered', 1],
    ]);
    const confirmation = await smtp.mails.next((m) => m.to.includes('pending@acme.test'));
    expect(confirmation.raw).toMatch(/^Subject: Confirm your subscription to Acme/m);
    expect(smtp.mails.items.map((m) => m.to[0]).sort()).toEqual(['ops@acme.test', 'pending@acme.test']);
    expect(receiver.hooks.items).toHaveLength(1);

    // notifySubscribers defaults to false: a plain update queues nothing.
    const plain = await call<{ id: string }>('POST', `/v1/status-pages/incidents/${created.body.id}/incident-updates`, {
      description: 'Quiet note',
    });
    expect(plain.status).toBe(200);
    expect(await svc.store.outbox.listForUpdate(plain.body.id)).toEqual([]);

    // Saving the notified update again with notifySubscribers does not notify the same recipients twice.
    const resave = await call('PUT', `/v1/status-pages/incidents/${created.body.id}/incident-updates/${updateId}`, {
      description: 'We are looking into it (edited)',
      status: 'INVESTIGATING',
      notifySubscribers: true,
    });
    expect(resave.status).toBe(200);
    expect(await svc.store.outbox.listForUpdate(updateId)).toHaveLength(2);
  });

  it('retries a failing webhook with backoff and delivers it once, with one idempotency key', async () => {
    const { svc, base } = await service();
    receiver.script.push(503, 500);
    const { incident } = await setup(svc, base, { webhook: true });
    const retries: number[] = [];
    svc.notifier.on('retry', (_entry, _error, delayMs) => retries.push(delayMs));
    const delivered = nextEvent(svc, 'delivered');

    await incident(true);
    const entry = await delivered;

    expect(receiver.hooks.items.map((h) => h.answered)).toEqual([503, 500, 204]);
    expect(new Set(receiver.hooks.items.map((h) => h.headers['x-outpost-delivery']))).toEqual(new Set([entry.id]));
    expect(retries).toHaveLength(2);
    // Attempt 1 waits 10..20 ms, attempt 2 waits 20..40 ms (base 20, equal jitter).
    expect(retries[0]).toBeGreaterThanOrEqual(10);
    expect(retries[0]).toBeLessThanOrEqual(20);
    expect(retries[1]).toBeGreaterThanOrEqual(20);
    expect(retries[1]).toBeLessThanOrEqual(40);
    const stored = await svc.store.outbox.get(entry.id);
    expect(stored).toMatchObject({ state: 'delivered', attempts: 3, lastError: null });
  });

  it('gives a 4xx answer up at once and stops after NOTIFY_MAX_ATTEMPTS failures', async () => {
    const { svc, base } = await service({ NOTIFY_MAX_ATTEMPTS: '2' });
    receiver.script.push(410);
    const { incident } = await setup(svc, base, { webhook: true });
    const failed = nextEvent(svc, 'failed');
    await incident(true);
    expect((await failed).attempts).toBe(1);
    expect(receiver.hooks.items).toHaveLength(1);

    receiver.script.push(503, 503, 503);
    const failedAgain = nextEvent(svc, 'failed');
    await incident(true);
    const entry = await failedAgain;
    expect(entry.attempts).toBe(2);
    expect((await svc.store.outbox.get(entry.id))?.lastError).toContain('gave up after 2 attempts');
  });

  it('records email as undeliverable without SMTP_URL, and still delivers webhooks', async () => {
    const { svc, base } = await service({ SMTP_URL: '' });
    const { incident } = await setup(svc, base, { email: 'ops@acme.test', webhook: true });
    const undeliverable = nextEvent(svc, 'undeliverable');
    const delivered = nextEvent(svc, 'delivered');
    await incident(true);
    const entry = await undeliverable;
    expect(entry.channel).toBe('EMAIL');
    expect(await svc.store.outbox.get(entry.id)).toMatchObject({
      state: 'undeliverable',
      lastError: expect.stringContaining('SMTP_URL'),
    });
    expect((await delivered).channel).toBe('WEBHOOK');
    expect(smtp.mails.items).toHaveLength(0);
  });

  it('refuses webhooks to internal addresses by default, records why on the delivery, and does not retry', async () => {
    const { svc, base } = await service({ OUTBOUND_ALLOW: '' });
    const port = new URL(receiver.url).port;
    const refused: Record<string, RegExp> = {
      [`http://127.0.0.1:${port}/a`]: /^refused: 127\.0\.0\.1 is a loopback address; allow it with OUTBOUND_ALLOW$/,
      [`http://localhost:${port}/b`]: /^refused: localhost resolved to (127\.0\.0\.1|::1), a loopback address/,
      [`http://0x7f000001:${port}/c`]: /^refused: 127\.0\.0\.1 is a loopback address/,
      [`http://[::1]:${port}/d`]: /^refused: ::1 is a loopback address/,
    };
    const { incident } = await setup(svc, base, { webhookUrls: Object.keys(refused) });
    const retried: string[] = [];
    svc.notifier.on('retry', (entry) => retried.push(entry.address));
    const failed = new Promise<void>((resolve) => {
      let n = 0;
      svc.notifier.on('failed', () => {
        n += 1;
        if (n === Object.keys(refused).length) resolve();
      });
    });
    const created = await incident(true);
    await failed;

    const entries = await svc.store.outbox.listForUpdate(first(created.body.incidentUpdates).id);
    // The URLs as stored: the WHATWG parser already turned 0x7f000001 into 127.0.0.1.
    expect(entries.map((e) => e.address)).toEqual(Object.keys(refused).map((u) => new URL(u).href));
    for (const [url, reason] of Object.entries(refused)) {
      const entry = entries.find((e) => e.address === new URL(url).href);
      expect(entry, url).toMatchObject({ state: 'failed', attempts: 1 });
      expect(entry?.lastError, url).toMatch(reason);
    }
    expect(retried).toEqual([]);
    expect(receiver.hooks.items).toHaveLength(0);
  });

  it('keeps queued deliveries across a restart and delivers them after it', async () => {
    // The first process commits the update and its deliveries, then stops before its worker ran.
    const first1 = await service({}, { start: false });
    const { incident } = await setup(first1.svc, first1.base, { email: 'ops@acme.test', webhook: true });
    const created = await incident(true);
    expect(created.status).toBe(201);
    await first1.svc.stop();
    services.splice(services.indexOf(first1.svc), 1);
    expect(smtp.mails.items).toHaveLength(0);
    expect(receiver.hooks.items).toHaveLength(0);

    const second = await service({}, { start: false });
    const bothDelivered = new Promise<void>((resolve) => {
      let n = 0;
      second.svc.notifier.on('delivered', () => {
        n += 1;
        if (n === 2) resolve();
      });
    });
    await second.svc.start();
    await bothDelivered;
    const after = await second.svc.store.outbox.listForUpdate(first(created.body.incidentUpdates).id);
    expect(after.map((e) => e.state)).toEqual(['delivered', 'delivered']);
    expect(smtp.mails.items).toHaveLength(1);
    expect(receiver.hooks.items).toHaveLength(1);
  });
});

describe('retry delay', () => {
  it('doubles from the base, stays within [nominal/2, nominal] and is capped', () => {
    expect(retryDelayMs(1, 1000, 60_000, () => 0)).toBe(500);
    expect(retryDelayMs(1, 1000, 60_000, () => 0.999999)).toBe(1000);
    expect(retryDelayMs(3, 1000, 60_000, () => 0)).toBe(2000);
    expect(retryDelayMs(30, 1000, 60_000, () => 1)).toBe(60_000);
  });
});
