/**
 * The alert notification pipeline over a real store: alerts fanned out to the channels told about
 * them (flags, check and group subscriptions, muting, maintenance windows), stored notifications
 * delivered to webhook receivers on loopback by the delivery worker (retries, permanent failures,
 * a stuck receiver, a worker that died after claiming), and GET /v1/alert-notifications.
 *
 * The channel senders are another part's (src/service/notify/channels/); here a small WEBHOOK sender
 * posts the frozen message to the channel's URL through the outbound guard, as the contract says.
 */
import { randomUUID } from 'node:crypto';
import { once } from 'node:events';
import { rmSync } from 'node:fs';
import path from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import type { Dispatcher } from 'undici';
import { request } from 'undici';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createAccount } from '../../src/service/accounts.ts';
import { AlertFanOut } from '../../src/service/alerting/fanout.ts';
import { INITIAL_STATE } from '../../src/service/alerting/state-machine.ts';
import { buildService, type Service } from '../../src/service/app.ts';
import { loadServiceConfig } from '../../src/service/config.ts';
import { AlertDeliveryWorker } from '../../src/service/notify/alert-delivery.ts';
import { createChannelSenders } from '../../src/service/notify/channels/index.ts';
import type {
  AlertMessage,
  ChannelSender,
  ChannelSenders,
  SendContext,
} from '../../src/service/notify/channels/types.ts';
import { loadNotifyConfig, type NotifyConfig } from '../../src/service/notify/config.ts';
import { loadOutboundConfig } from '../../src/service/outbound/config.ts';
import { createOutboundDispatcher } from '../../src/service/outbound/dispatcher.ts';
import { OutboundPolicy } from '../../src/service/outbound/policy.ts';
import type { AlertType, CheckAlertRecord } from '../../src/service/store/check-status-types.ts';
import { DB_FILE } from '../../src/service/store/sqlite/db.ts';
import { AGENT_PATHS, type Job } from '../../src/shared/protocol.ts';
import { registrationBody, resultFor } from '../helpers/dispatch-harness.ts';
import { type ReceivedHook, startWebhookReceiver, type WebhookReceiver } from '../helpers/notify-receivers.ts';
import { json, startTestApi, type TestAccount, type TestApi, tempDataDir } from '../helpers/public-api.ts';

const PUBLIC_URL = 'https://outpost.example.com/base';
const log = { warn() {}, error() {} };

let api: TestApi;
let acme: TestAccount;
let other: TestAccount;
let http: Dispatcher;
const receivers: WebhookReceiver[] = [];
const workers: AlertDeliveryWorker[] = [];

beforeEach(async () => {
  api = await startTestApi({ OUTBOUND_ALLOW: '127.0.0.1', PUBLIC_URL });
  acme = await api.newAccount('Acme');
  other = await api.newAccount('Other');
  http = createOutboundDispatcher(new OutboundPolicy(loadOutboundConfig({ OUTBOUND_ALLOW: '127.0.0.1' })), {
    connectTimeoutMs: 1_000,
  });
});

afterEach(async () => {
  for (const r of receivers.splice(0)) await r.close();
  for (const w of workers.splice(0)) await w.stop();
  await http.close();
  await api.close();
});

/** Posts the message as JSON, the notification id in a header: 2xx delivered, 4xx permanent, else retried. */
const postMessage: ChannelSender<'WEBHOOK'> = async (message, channel, ctx) => {
  try {
    const res = await request(channel.config.url, {
      method: 'POST',
      body: JSON.stringify(message),
      headers: { 'content-type': 'application/json', 'x-notification-id': message.notificationId },
      dispatcher: ctx.dispatcher,
      headersTimeout: ctx.timeoutMs,
      bodyTimeout: ctx.timeoutMs,
    });
    const text = await res.body.text();
    if (res.statusCode < 300) return { ok: true, detail: `${res.statusCode} ${text}`.trim() };
    return { ok: false, permanent: res.statusCode < 500, error: `HTTP ${res.statusCode}`, detail: text };
  } catch (err) {
    return { ok: false, permanent: false, error: (err as Error).message };
  }
};
const senders: ChannelSenders = { ...createChannelSenders(), WEBHOOK: postMessage };

function notifyConfig(env: Record<string, string> = {}): NotifyConfig {
  return loadNotifyConfig({
    NOTIFY_BACKOFF_BASE_MS: '100',
    NOTIFY_BACKOFF_MAX_MS: '400',
    NOTIFY_MAX_ATTEMPTS: '3',
    NOTIFY_POLL_MS: '60000',
    ...env,
  });
}

function context(): Omit<SendContext, 'timeoutMs' | 'now'> {
  return { dispatcher: http, providers: UNAVAILABLE_PROVIDERS, mail: null };
}
const UNAVAILABLE_PROVIDERS = {
  pagerDutyEventsUrl: 'http://127.0.0.1:9/pd',
  opsgenieApiUrl: { US: 'http://127.0.0.1:9/us', EU: 'http://127.0.0.1:9/eu' },
};

function deliveryWorker(config = notifyConfig()): AlertDeliveryWorker {
  const worker = new AlertDeliveryWorker({ store: api.store, config, senders, context: context(), log });
  workers.push(worker);
  return worker;
}

function fanOutTo(delivery?: AlertDeliveryWorker): AlertFanOut {
  return new AlertFanOut({
    store: api.store,
    publicUrl: new URL(PUBLIC_URL),
    pollMs: 60_000,
    log,
    onQueued: () => delivery?.poke(),
  });
}

async function receiver(): Promise<WebhookReceiver> {
  const r = await startWebhookReceiver();
  receivers.push(r);
  return r;
}

async function createCheck(body: object = {}, who = acme): Promise<string> {
  const res = await api.request(who, 'POST', '/v1/checks/api', {
    name: 'Homepage',
    tags: ['web'],
    request: { method: 'GET', url: 'https://example.test/' },
    ...body,
  });
  expect(res.statusCode, res.body).toBe(201);
  return json<{ id: string }>(res).id;
}

async function createGroup(body: object = {}): Promise<number> {
  const res = await api.request(acme, 'POST', '/v2/check-groups', { name: 'Shop', tags: ['shop'], ...body });
  expect(res.statusCode, res.body).toBe(201);
  return json<{ id: number }>(res).id;
}

/** A WEBHOOK channel (to `url`) subscribed as `subscriptions` say; flags as given. */
async function createChannel(url: string, subscriptions: object[], flags: object = {}, who = acme): Promise<number> {
  const res = await api.request(who, 'POST', '/v1/alert-channels', {
    type: 'WEBHOOK',
    config: { url, webhookSecret: 'a-very-secret-signing-key-1234' },
    subscriptions,
    ...flags,
  });
  expect(res.statusCode, res.body).toBe(201);
  return json<{ id: number }>(res).id;
}

/** Records an alert the way the status transaction does (check_alerts row, check status). */
async function raise(
  checkId: string,
  alertType: AlertType,
  opts: { sslDaysRemaining?: number; at?: Date; who?: TestAccount } = {},
): Promise<CheckAlertRecord> {
  const at = (opts.at ?? new Date()).toISOString();
  const who = opts.who ?? acme;
  // A stored result pending its status update, as the dispatcher leaves it before applying it.
  const { id: resultId } = await api.store.results.insertOnce({
    accountId: who.accountId,
    checkId,
    runId: randomUUID(),
    checkName: 'Homepage',
    locationId: '',
    runLocation: 'office-1',
    attempts: 1,
    resultType: 'FINAL',
    pendingStatus: { dueAt: at },
    payload: {} as never,
  });
  const applied = await api.store.checkStatuses.applyResult(
    (opts.who ?? acme).accountId,
    checkId,
    resultId,
    at,
    () => ({
      status: {
        hasFailures: true,
        hasErrors: false,
        isDegraded: false,
        longestRun: 40,
        shortestRun: 40,
        lastRunLocation: 'office-1',
        lastCheckRunId: resultId,
        sslDaysRemaining: opts.sslDaysRemaining ?? null,
        alert: INITIAL_STATE,
      },
      nextReminderAt: null,
      alerts: [
        {
          name: 'Homepage',
          checkType: 'API',
          alertType,
          runLocation: 'office-1',
          responseTime: 40,
          error: 'status 500',
          statusCode: '500',
          resultId,
          startedAt: at,
          sslDaysRemaining: opts.sslDaysRemaining ?? null,
        },
      ],
    }),
  );
  const alert = applied?.alerts[0];
  if (!alert) throw new Error('no alert recorded');
  return alert;
}

async function channelsTold(alert: CheckAlertRecord): Promise<number[]> {
  return (await api.store.alertNotifications.forAlert(alert.id)).notifications.map((n) => n.alertChannelId);
}

const sub = (checkId: string, activated = true) => ({ checkId, activated });

describe('fan-out: who is told', () => {
  it('tells each channel what its flags ask for: failures, recoveries, degradations, reminders like what they remind of, SSL under the threshold', async () => {
    const checkId = await createCheck();
    const failures = await createChannel('http://127.0.0.1:9/a', [sub(checkId)]);
    const degraded = await createChannel('http://127.0.0.1:9/b', [sub(checkId)], {
      sendFailure: false,
      sendRecovery: false,
      sendDegraded: true,
    });
    const ssl = await createChannel('http://127.0.0.1:9/c', [sub(checkId)], {
      sendFailure: false,
      sendRecovery: false,
      sslExpiry: true,
      sslExpiryThreshold: 10,
    });
    const fanOut = fanOutTo();
    const told = async (type: AlertType, sslDaysRemaining?: number) => {
      const alert = await raise(checkId, type, { sslDaysRemaining });
      await fanOut.fanOut(alert);
      return channelsTold(alert);
    };
    expect(await told('ALERT_FAILURE')).toEqual([failures]);
    expect(await told('ALERT_DEGRADED_FAILURE')).toEqual([failures]);
    expect(await told('ALERT_FAILURE_REMAIN')).toEqual([failures]);
    expect(await told('ALERT_RECOVERY')).toEqual([failures]);
    expect(await told('ALERT_DEGRADED_RECOVERY')).toEqual([failures]);
    expect(await told('ALERT_DEGRADED')).toEqual([degraded]);
    expect(await told('ALERT_FAILURE_DEGRADED')).toEqual([degraded]);
    expect(await told('ALERT_DEGRADED_REMAIN')).toEqual([degraded]);
    expect(await told('ALERT_SSL', 10)).toEqual([ssl]);
    expect(await told('ALERT_SSL', 11)).toEqual([]);
  });

  it('freezes the message (result link under PUBLIC_URL, incident key, tags, group) and keeps the channel config masked', async () => {
    const groupId = await createGroup();
    const checkId = await createCheck({ groupId });
    const channel = await createChannel('http://127.0.0.1:9/a', [sub(checkId)]);
    const alert = await raise(checkId, 'ALERT_FAILURE');
    await fanOutTo().fanOut(alert);
    const [n] = (await api.store.alertNotifications.forAlert(alert.id)).notifications;
    if (!n) throw new Error('no notification queued');
    expect(n.message).toEqual({
      notificationId: n.id,
      alertId: alert.id,
      alertType: 'ALERT_FAILURE',
      accountId: acme.accountId,
      checkId,
      checkName: 'Homepage',
      checkType: 'API',
      groupName: 'Shop',
      tags: ['web'],
      runLocation: 'office-1',
      responseTime: 40,
      error: 'status 500',
      statusCode: '500',
      resultId: alert.resultId,
      resultUrl: `${PUBLIC_URL}/v1/check-results/${checkId}/${alert.resultId}`,
      startedAt: alert.startedAt,
      createdAt: alert.createdAt,
      sslDaysRemaining: null,
      incidentKey: `outpost-check-${checkId}`,
    } satisfies AlertMessage);
    expect(n).toMatchObject({ alertChannelId: channel, channelType: 'WEBHOOK', state: 'pending', attempts: 0 });
    expect(n.alertConfig).toMatchObject({ url: 'http://127.0.0.1:9/a', webhookSecret: '********1234' });
  });

  it("tells channels subscribed to the check or to its group, each once, and skips deactivated subscriptions and other checks' channels", async () => {
    const groupId = await createGroup();
    const checkId = await createCheck({ groupId });
    const otherCheck = await createCheck();
    const direct = await createChannel('http://127.0.0.1:9/a', [sub(checkId)]);
    const viaGroup = await createChannel('http://127.0.0.1:9/b', [{ groupId, activated: true }]);
    const both = await createChannel('http://127.0.0.1:9/c', [sub(checkId), { groupId, activated: true }]);
    await createChannel('http://127.0.0.1:9/d', [sub(checkId, false)]);
    await createChannel('http://127.0.0.1:9/e', [{ groupId, activated: false }]);
    await createChannel('http://127.0.0.1:9/f', [sub(otherCheck)]);
    const alert = await raise(checkId, 'ALERT_FAILURE');
    expect(await fanOutTo().fanOut(alert)).toBe(3);
    expect(await channelsTold(alert)).toEqual([direct, viaGroup, both]);
  });

  it('tells nobody about a muted check, a check of a muted group or one in an active maintenance window, and keeps the alert in the history', async () => {
    const mutedGroup = await createGroup({ muted: true });
    const cases = {
      'the check is muted': await createCheck({ muted: true }),
      'its group "Shop" is muted': await createCheck({ groupId: mutedGroup }),
      'maintenance window "Upgrade"': await createCheck({ tags: ['db'] }),
    };
    const windowRes = await api.request(acme, 'POST', '/v1/maintenance-windows', {
      name: 'Upgrade',
      tags: ['db'],
      startsAt: new Date(Date.now() - 3_600_000).toISOString(),
      endsAt: new Date(Date.now() + 3_600_000).toISOString(),
      repeatUnit: null,
    });
    expect(windowRes.statusCode, windowRes.body).toBe(201);
    const fanOut = fanOutTo();
    for (const [reason, checkId] of Object.entries(cases)) {
      await createChannel('http://127.0.0.1:9/a', [sub(checkId)]);
      const alert = await raise(checkId, 'ALERT_FAILURE');
      expect(await fanOut.fanOut(alert)).toBe(0);
      const record = await api.store.alertNotifications.forAlert(alert.id);
      expect(record.notifications).toEqual([]);
      expect(record.suppressedReason).toContain(reason);
      expect(record.fannedOutAt).not.toBeNull();
      const history = json<Array<{ id: string }>>(await api.request(acme, 'GET', `/v1/check-alerts/${checkId}`));
      expect(history.map((a) => a.id)).toEqual([String(alert.id)]);
    }
    // Outside the window's tags, the same account's check is told.
    const unaffected = await createCheck({ tags: ['web'] });
    await createChannel('http://127.0.0.1:9/a', [sub(unaffected)]);
    expect(await fanOut.fanOut(await raise(unaffected, 'ALERT_FAILURE'))).toBe(1);
  });

  it('queues one notification per alert and channel when the fan-out runs twice, at once or again later, keeping the first id', async () => {
    const checkId = await createCheck();
    await createChannel('http://127.0.0.1:9/a', [sub(checkId)]);
    await createChannel('http://127.0.0.1:9/b', [sub(checkId)]);
    const alert = await raise(checkId, 'ALERT_FAILURE');
    // Two processes (or a restarted one that read the alert before the first committed).
    const [a, b] = await Promise.all([fanOutTo().fanOut(alert), fanOutTo().fanOut(alert)]);
    expect(a + b).toBe(2);
    const first = (await api.store.alertNotifications.forAlert(alert.id)).notifications.map((n) => n.id);
    expect(first).toHaveLength(2);
    expect(await fanOutTo().fanOut(alert)).toBe(0);
    expect((await api.store.alertNotifications.forAlert(alert.id)).notifications.map((n) => n.id)).toEqual(first);
    expect(await api.store.alertNotifications.pendingAlerts(10)).toEqual([]);
  });

  it('fans out alerts left pending (a crash before the fan-out committed) when it starts', async () => {
    const checkId = await createCheck();
    const hook = await receiver();
    await createChannel(hook.url, [sub(checkId)]);
    const alert = await raise(checkId, 'ALERT_FAILURE');
    const delivery = deliveryWorker();
    const fanOut = fanOutTo(delivery);
    delivery.start();
    fanOut.start();
    const [n] = (await once(delivery, 'delivered')) as [{ id: string; checkAlertId: number }];
    await fanOut.stop();
    expect(n.checkAlertId).toBe(alert.id);
    expect(hook.hooks.items.map((h) => h.headers['x-notification-id'])).toEqual([n.id]);
  });

  it('does not hold other alerts behind one that cannot be fanned out, and fans that one out once it can', async () => {
    const brokenCheck = await createCheck();
    const hook = await receiver();
    await createChannel(hook.url, [sub(brokenCheck)]);
    const otherCheck = await createCheck({}, other);
    const otherChannel = await createChannel(hook.url, [sub(otherCheck)], {}, other);
    // A maintenance window row its repository cannot read: Acme's alerts cannot be fanned out.
    const windowRes = await api.request(acme, 'POST', '/v1/maintenance-windows', {
      name: 'W',
      tags: ['x'],
      startsAt: '2026-01-01T00:00:00Z',
      endsAt: '2026-01-01T01:00:00Z',
      repeatUnit: null,
    });
    expect(windowRes.statusCode, windowRes.body).toBe(201);
    const db = new DatabaseSync(path.join(api.dataDir, DB_FILE));
    db.exec(`UPDATE maintenance_windows SET tags = 'not json'`);
    const broken = await raise(brokenCheck, 'ALERT_FAILURE');
    const later = await raise(otherCheck, 'ALERT_FAILURE', { who: other });
    const delivery = deliveryWorker();
    delivery.start();
    const fanOut = new AlertFanOut({
      store: api.store,
      publicUrl: new URL(PUBLIC_URL),
      pollMs: 200,
      log,
      onQueued: () => delivery.poke(),
    });
    fanOut.start();
    const [first] = (await once(delivery, 'delivered')) as [{ alertChannelId: number }];
    expect(first.alertChannelId).toBe(otherChannel);
    expect((await api.store.alertNotifications.forAlert(later.id)).fannedOutAt).not.toBeNull();
    expect((await api.store.alertNotifications.forAlert(broken.id)).fannedOutAt).toBeNull();
    // Repaired: the next poll fans it out.
    db.exec(`UPDATE maintenance_windows SET tags = '["x"]'`);
    db.close();
    const [second] = (await once(delivery, 'delivered')) as [{ checkAlertId: number }];
    expect(second.checkAlertId).toBe(broken.id);
    await fanOut.stop();
  });
});

/** Fans the alert out and starts a delivery worker on it; returns the notifications queued. */
async function queueAndDeliver(
  checkId: string,
  config?: NotifyConfig,
): Promise<{ delivery: AlertDeliveryWorker; ids: string[] }> {
  const delivery = deliveryWorker(config);
  delivery.start();
  const alert = await raise(checkId, 'ALERT_FAILURE');
  await fanOutTo(delivery).fanOut(alert);
  return { delivery, ids: (await api.store.alertNotifications.forAlert(alert.id)).notifications.map((n) => n.id) };
}

const notificationIds = (hooks: readonly ReceivedHook[]) => hooks.map((h) => h.headers['x-notification-id']);

describe('delivery', () => {
  it('retries a failing receiver with backoff and delivers with one notification id, recording what it answered', async () => {
    const checkId = await createCheck();
    const hook = await receiver();
    hook.script.push(503, 500);
    await createChannel(hook.url, [sub(checkId)]);
    const retries: number[] = [];
    const { delivery, ids } = await queueAndDeliver(checkId);
    delivery.on('retry', (_n, _error, delayMs) => retries.push(delayMs));
    await once(delivery, 'delivered');
    expect(hook.hooks.items.map((h) => h.answered)).toEqual([503, 500, 204]);
    expect(notificationIds(hook.hooks.items)).toEqual([ids[0], ids[0], ids[0]]);
    // Equal jitter over base 100 ms: 50-100 ms, then 100-200 ms.
    expect(retries[0]).toBeGreaterThanOrEqual(50);
    expect(retries[1]).toBeGreaterThanOrEqual(100);
    const [listed] = json<Array<Record<string, unknown>>>(await api.request(acme, 'GET', '/v1/alert-notifications'));
    expect(listed).toMatchObject({
      id: ids[0],
      status: 'SUCCESS',
      notificationResult: '204',
      checkId,
      type: 'WEBHOOK',
      attempts: 3,
      lastError: null,
    });
  });

  it('gives up at once on a permanent error, and after NOTIFY_MAX_ATTEMPTS on transient ones, saying why', async () => {
    const checkId = await createCheck();
    const refusing = await receiver();
    refusing.script.push(400);
    const broken = await receiver();
    broken.script.push(500, 500, 500);
    const refusingId = await createChannel(refusing.url, [sub(checkId)]);
    await createChannel(broken.url, [sub(checkId)]);
    const { delivery } = await queueAndDeliver(checkId);
    const reasons = new Map<number, string>();
    await new Promise<void>((resolve) =>
      delivery.on('failed', (n, reason) => {
        reasons.set(n.alertChannelId, reason);
        if (reasons.size === 2) resolve();
      }),
    );
    expect(reasons.get(refusingId)).toBe('HTTP 400');
    expect([...reasons.values()]).toContain('gave up after 3 attempts; last: HTTP 500');
    expect(refusing.hooks.items).toHaveLength(1);
    expect(broken.hooks.items).toHaveLength(3);
    const failed = json<Array<{ status: string; alertChannelId: number; attempts: number; lastError: string }>>(
      await api.request(acme, 'GET', '/v1/alert-notifications?hasFailures=true'),
    );
    expect(failed.map((n) => n.status)).toEqual(['FAILURE', 'FAILURE']);
    const gaveUp = failed.find((n) => n.alertChannelId !== refusingId);
    expect(gaveUp).toMatchObject({ attempts: 3, lastError: 'gave up after 3 attempts; last: HTTP 500' });
  });

  it('records a notification whose channel was deleted before it was sent as failed, saying so', async () => {
    const checkId = await createCheck();
    const channel = await createChannel('http://127.0.0.1:9/a', [sub(checkId)]);
    const alert = await raise(checkId, 'ALERT_FAILURE');
    await fanOutTo().fanOut(alert);
    expect((await api.request(acme, 'DELETE', `/v1/alert-channels/${channel}`)).statusCode).toBe(204);
    const delivery = deliveryWorker();
    delivery.start();
    const [, reason] = (await once(delivery, 'failed')) as [unknown, string];
    expect(reason).toBe('the alert channel was deleted before the notification was sent');
    const [listed] = json<Array<Record<string, unknown>>>(
      await api.request(acme, 'GET', `/v1/alert-notifications?alertChannelId=${channel}`),
    );
    expect(listed).toMatchObject({ status: 'FAILURE', alertChannelId: channel, notificationResult: reason });
  });

  it('does not hold a later notification to another channel behind a send to a receiver that never answers', async () => {
    const stuck = await receiver();
    stuck.script.push('hang');
    const healthy = await receiver();
    const stuckCheck = await createCheck();
    const healthyCheck = await createCheck();
    await createChannel(stuck.url, [sub(stuckCheck)]);
    const healthyId = await createChannel(healthy.url, [sub(healthyCheck)]);
    const delivery = deliveryWorker(notifyConfig({ NOTIFY_TIMEOUT_MS: '3000' }));
    delivery.start();
    const fanOut = fanOutTo(delivery);
    await fanOut.fanOut(await raise(stuckCheck, 'ALERT_FAILURE'));
    // The stuck send is in hand: its request arrived and will get no answer.
    await stuck.hooks.next();
    const startedAt = Date.now();
    await fanOut.fanOut(await raise(healthyCheck, 'ALERT_FAILURE'));
    const [delivered] = (await once(delivery, 'delivered')) as [{ alertChannelId: number }];
    expect(delivered.alertChannelId).toBe(healthyId);
    expect(Date.now() - startedAt).toBeLessThan(3_000);
    // The stuck one is then given up on for this attempt at its timeout, and retried.
    const [retried, error] = (await once(delivery, 'retry')) as [{ alertChannelId: number }, string];
    expect(retried.alertChannelId).not.toBe(healthyId);
    expect(error).toMatch(/timeout|no answer/i);
  });

  it('re-sends, after the lease, with the same notification id what a worker claimed and sent but died before recording', async () => {
    const checkId = await createCheck();
    const hook = await receiver();
    const channel = await createChannel(hook.url, [sub(checkId)]);
    const alert = await raise(checkId, 'ALERT_FAILURE');
    await fanOutTo().fanOut(alert);
    // The worker that died: it claimed (a 300 ms lease) and sent, and recorded nothing.
    const [claimed] = await api.store.alertNotifications.claimDue(new Date(), 10, 300);
    if (!claimed) throw new Error('nothing claimed');
    const stored = await api.store.alertChannels.get(acme.accountId, channel);
    if (stored?.definition.type !== 'WEBHOOK') throw new Error('no webhook channel');
    expect(
      await postMessage(claimed.message, stored.definition, { ...context(), timeoutMs: 1_000, now: Date.now }),
    ).toMatchObject({ ok: true });
    const delivery = deliveryWorker();
    delivery.start();
    const [n] = (await once(delivery, 'delivered')) as [{ id: string; attempts: number }];
    expect(n.id).toBe(claimed.id);
    expect(n.attempts).toBe(2);
    expect(notificationIds(hook.hooks.items)).toEqual([claimed.id, claimed.id]);
    expect(JSON.parse(hook.hooks.items[1]?.body ?? '{}')).toEqual(claimed.message);
  });
});

describe('GET /v1/alert-notifications', () => {
  async function seed(): Promise<{ checkId: string; a: number; b: number }> {
    const checkId = await createCheck();
    const a = await createChannel('http://127.0.0.1:9/a', [sub(checkId)]);
    const b = await createChannel('http://127.0.0.1:9/b', [sub(checkId)]);
    const fanOut = fanOutTo();
    for (let i = 0; i < 3; i++)
      await fanOut.fanOut(await raise(checkId, i % 2 === 0 ? 'ALERT_FAILURE' : 'ALERT_RECOVERY'));
    return { checkId, a, b };
  }

  it('lists newest first in pages, by channel and by failure, in the shape of the reference', async () => {
    const { checkId, a, b } = await seed();
    const all = json<Array<Record<string, unknown>>>(
      await api.request(acme, 'GET', '/v1/alert-notifications?limit=100'),
    );
    expect(all).toHaveLength(6);
    expect(all[0]).toEqual({
      id: expect.any(String),
      type: 'WEBHOOK',
      status: 'IN_PROGRESS',
      alertConfig: {
        name: undefined,
        url: 'http://127.0.0.1:9/b',
        method: 'POST',
        headers: [],
        queryParameters: [],
        webhookSecret: '********1234',
      },
      notificationResult: null,
      timestamp: null,
      checkType: 'API',
      checkId,
      checkAlertId: expect.any(String),
      alertChannelId: b,
      checkResultId: expect.any(String),
      attempts: 0,
      lastError: null,
    });
    const page2 = json<Array<{ id: string }>>(await api.request(acme, 'GET', '/v1/alert-notifications?limit=2&page=2'));
    expect(page2.map((n) => n.id)).toEqual(all.slice(2, 4).map((n) => n.id));
    const onA = json<Array<{ alertChannelId: number }>>(
      await api.request(acme, 'GET', `/v1/alert-notifications?alertChannelId=${a}`),
    );
    expect(onA.map((n) => n.alertChannelId)).toEqual([a, a, a]);
    const [failing] = all;
    await api.store.alertNotifications.markFailed(String(failing?.id), 'HTTP 410', 'gone');
    const failed = json<Array<{ id: string; notificationResult: string }>>(
      await api.request(acme, 'GET', '/v1/alert-notifications?hasFailures=true'),
    );
    expect(failed).toEqual([
      expect.objectContaining({ id: failing?.id, status: 'FAILURE', notificationResult: 'gone' }),
    ]);
    expect(
      json<unknown[]>(await api.request(acme, 'GET', '/v1/alert-notifications?hasFailures=false&limit=100')),
    ).toHaveLength(5);
  });

  it("windows by UNIX seconds of at most 24 hours, and shows nothing of another account's", async () => {
    const { a } = await seed();
    const now = Math.floor(Date.now() / 1000);
    const inWindow = await api.request(acme, 'GET', `/v1/alert-notifications?from=${now - 3600}&limit=100`);
    expect(json<unknown[]>(inWindow)).toHaveLength(6);
    expect(json<unknown[]>(await api.request(acme, 'GET', `/v1/alert-notifications?to=${now - 3600}`))).toEqual([]);
    const tooWide = await api.request(acme, 'GET', `/v1/alert-notifications?from=${now - 90_000}&to=${now}`);
    expect(tooWide.statusCode).toBe(400);
    expect(json(tooWide).message).toMatch(/from.*to.*86400 seconds \(24 hours\)/);
    const badLimit = await api.request(acme, 'GET', '/v1/alert-notifications?limit=101');
    expect(badLimit.statusCode).toBe(400);
    expect(json(badLimit).message).toContain('limit');
    expect(json<unknown[]>(await api.request(other, 'GET', '/v1/alert-notifications'))).toEqual([]);
    expect(json<unknown[]>(await api.request(other, 'GET', `/v1/alert-notifications?alertChannelId=${a}`))).toEqual([]);
  });
});

describe('wired in the service', () => {
  let service: Service;
  let dataDir: string;
  afterEach(async () => {
    await service.stop();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('sends a failing result stored through the agent API to the subscribed channel, once', async () => {
    dataDir = tempDataDir();
    const env = {
      DATA_DIR: dataDir,
      PORT: '0',
      HOST: '127.0.0.1',
      OUTBOUND_ALLOW: '127.0.0.1',
      NOTIFY_POLL_MS: '60000',
    };
    service = await buildService(loadServiceConfig(env), { logger: false, alerting: { senders } });
    await service.start();
    const { accountId, apiKey } = await createAccount(service.store, 'Acme');
    const location = await service.store.locations.create(accountId, {
      name: 'Office',
      slugName: 'office',
      icon: 'location',
      proxyUrl: null,
    });
    const { rawKey } = await service.store.locations.createKey(accountId, location.id);
    const hook = await receiver();
    const headers = { authorization: `Bearer ${apiKey}`, 'x-service-account': accountId };
    const created = await service.app.inject({
      method: 'POST',
      url: '/v1/checks/api',
      headers,
      payload: {
        name: 'Homepage',
        privateLocations: ['office'],
        request: { method: 'GET', url: 'http://127.0.0.1:9/' },
        alertSettings: { escalationType: 'RUN_BASED', runBasedEscalation: { failedRunThreshold: 1 } },
        useGlobalAlertSettings: false,
      },
    });
    expect(created.statusCode, created.body).toBe(201);
    const check = await service.store.checks.get(accountId, created.json<{ id: string }>().id);
    if (!check) throw new Error('the check was not stored');
    const channel = await service.app.inject({
      method: 'POST',
      url: '/v1/alert-channels',
      headers,
      payload: { type: 'WEBHOOK', config: { url: hook.url }, subscriptions: [{ checkId: check.id, activated: true }] },
    });
    expect(channel.statusCode, channel.body).toBe(201);

    const agent = (path: string, payload: object) =>
      service.app.inject({ method: 'POST', url: path, headers: { authorization: `Bearer ${rawKey}` }, payload });
    const agentId = randomUUID();
    const registration = await agent(AGENT_PATHS.register, registrationBody(agentId));
    expect(registration.statusCode, registration.body).toBe(200);
    await service.dispatcher.enqueue(check, location.id, Date.now());
    const [job] = (await agent(AGENT_PATHS.lease, { agentId, slots: { uptime: 1, heavy: 1 }, waitSeconds: 0 })).json()
      .jobs as Job[];
    if (!job) throw new Error('no job leased');
    const delivered = once(service.alertDelivery, 'delivered');
    const failed = resultFor(job, agentId, { hasFailures: true, error: 'status 500' });
    expect((await agent(AGENT_PATHS.results, { agentId, leaseId: job.leaseId, result: failed })).statusCode).toBe(200);
    await delivered;
    const listed = (
      await service.app.inject({ method: 'GET', url: '/v1/alert-notifications', headers })
    ).json() as Array<{ id: string; status: string }>;
    expect(listed).toEqual([expect.objectContaining({ status: 'SUCCESS', checkId: check.id })]);
    expect(notificationIds(hook.hooks.items)).toEqual([listed[0]?.id]);
    expect(JSON.parse(hook.hooks.items[0]?.body ?? '{}')).toMatchObject({
      alertType: 'ALERT_FAILURE',
      checkId: check.id,
      error: 'status 500',
    });
  });
});
