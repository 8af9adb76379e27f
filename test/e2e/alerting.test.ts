/**
 * Alerting end to end (issue 11): the real service and agent processes, API checks against Debian's
 * nginx flipped between 200 and 500 by the test, and local receivers speaking each provider's
 * format (test/support/alert-receivers.ts): a signed webhook, Slack, PagerDuty Events v2, Opsgenie
 * (EU region), SMS and voice gateways, and a real SMTP server. Everything goes through the public
 * API; waits are on receivers and API state, never on fixed sleeps.
 *
 * The four scenarios run concurrently, each against its own receivers and checks: reminders cannot
 * come faster than the reference's smallest interval (1 minute), so the first one takes about two
 * and a half minutes (two reminders), and the others finish within that time.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort } from '../agent/dns-server.ts';
import {
  type HttpReceiver,
  type OpsgenieRequest,
  type PagerDutyEvent,
  type ReceivedWebhook,
  type SmtpReceiver,
  startGatewayReceiver,
  startOpsgenieReceiver,
  startPagerDutyReceiver,
  startSlackReceiver,
  startSmtpReceiver,
  startWebhookReceiver,
  type WebhookReceiver,
} from '../support/alert-receivers.ts';
import { createWebhookChannel } from '../support/e2e-webhook-channel.ts';
import { apiCheck, type FlipTarget, startFlipTarget } from '../support/nginx-flip.ts';
import { Api, createAccount, type Proc, startAgent, startService, tempDir, until } from './harness.ts';

const SECRET = 'whsec-e2e-0123456789abcdef';
/** The webhook body: the vendor's template variables, so a receiver can tell alerts apart. */
const TEMPLATE = JSON.stringify({
  alertType: '{{ALERT_TYPE}}',
  isReminder: '{{IS_REMINDER}}',
  checkId: '{{CHECK_ID}}',
  checkName: '{{CHECK_NAME}}',
  checkType: '{{CHECK_TYPE}}',
  resultLink: '{{{RESULT_LINK}}}',
  runLocation: '{{RUN_LOCATION}}',
  startedAt: '{{STARTED_AT}}',
  tags: '{{TAGS}}',
});
/** Receivers answer within this; reminders (1 minute apart) get longer. */
const ARRIVAL_MS = 45_000;
const MINUTE = 60_000;

interface CheckAlert {
  id: string;
  checkId: string;
  alertType: string;
  runLocation: string;
  created_at: string;
  startedAt: string;
}

interface AlertNotification {
  id: string;
  type: string;
  status: 'IN_PROGRESS' | 'SUCCESS' | 'FAILURE' | 'RATE_LIMITED';
  notificationResult: string | null;
  checkId: string;
  checkAlertId: string;
  alertChannelId: number;
  checkResultId: string;
}

interface WebhookBody {
  alertType: string;
  checkId: string;
  checkName: string;
  resultLink: string;
  runLocation: string;
}

const hookBody = (r: ReceivedWebhook) => r.json as WebhookBody;
const hookOf = (checkId: string, alertType: string) => (r: ReceivedWebhook) =>
  r.answered === 200 && hookBody(r)?.checkId === checkId && hookBody(r).alertType === alertType;

/** A check's alert history, oldest first (the API answers newest first). */
async function alertsOf(api: Api, checkId: string): Promise<CheckAlert[]> {
  return (await api.ok<CheckAlert[]>('GET', `/v1/check-alerts/${checkId}?limit=100`)).reverse();
}

function awaitAlert(api: Api, checkId: string, alertType: string, timeoutMs = 90_000): Promise<CheckAlert> {
  return until(async () => (await alertsOf(api, checkId)).find((a) => a.alertType === alertType), {
    timeoutMs,
    everyMs: 250,
    what: `${alertType} for check ${checkId}`,
  });
}

const transitions = (alerts: CheckAlert[]) =>
  alerts.filter((a) => !a.alertType.endsWith('_REMAIN')).map((a) => a.alertType);

/** Resolves with the check's FINAL results (oldest first) once `count` match. */
function awaitResults(
  api: Api,
  checkId: string,
  match: (r: Record<string, unknown>) => boolean,
  count: number,
  timeoutMs = 90_000,
) {
  return until(
    async () => {
      const found = (await api.results(checkId)).filter(match).reverse();
      return found.length >= count ? found : undefined;
    },
    { timeoutMs, everyMs: 250, what: `${count} matching results of check ${checkId}` },
  );
}

const failingSince = (sinceMs: number, location?: string) => (r: Record<string, unknown>) =>
  r.hasFailures === true &&
  Date.parse(String(r.startedAt)) >= sinceMs &&
  (location === undefined || r.runLocation === location);
const passingAt = (location: string) => (r: Record<string, unknown>) =>
  r.hasFailures === false && r.runLocation === location;

async function notificationsOf(api: Api, checkId: string): Promise<AlertNotification[]> {
  return (await api.ok<AlertNotification[]>('GET', '/v1/alert-notifications?limit=100')).filter(
    (n) => n.checkId === checkId,
  );
}

function webhookChannel(api: Api, receiver: WebhookReceiver, checkIds: string[]): Promise<{ id: number }> {
  return createWebhookChannel(api, {
    name: 'signed hook',
    receiverUrl: receiver.url,
    template: TEMPLATE,
    webhookSecret: SECRET,
    checkIds,
  });
}

/** Every provider of the first scenario, and one signed-webhook receiver for each of the others. */
interface Receivers {
  hook: WebhookReceiver;
  slack: HttpReceiver;
  pagerDuty: HttpReceiver;
  opsgenieUs: HttpReceiver<OpsgenieRequest>;
  opsgenieEu: HttpReceiver<OpsgenieRequest>;
  sms: HttpReceiver;
  voice: HttpReceiver;
  smtp: SmtpReceiver;
  multi: WebhookReceiver;
  maintenance: WebhookReceiver;
  crash: WebhookReceiver;
}

async function startReceivers(): Promise<Receivers> {
  return {
    hook: await startWebhookReceiver(SECRET),
    slack: await startSlackReceiver(),
    pagerDuty: await startPagerDutyReceiver(),
    opsgenieUs: await startOpsgenieReceiver(),
    opsgenieEu: await startOpsgenieReceiver(),
    sms: await startGatewayReceiver(),
    voice: await startGatewayReceiver(),
    smtp: await startSmtpReceiver(),
    multi: await startWebhookReceiver(SECRET),
    maintenance: await startWebhookReceiver(SECRET),
    crash: await startWebhookReceiver(SECRET),
  };
}

/** One channel of every type, all subscribed to `checkId`, each pointed at its receiver. */
async function everyChannel(api: Api, receivers: Receivers, checkId: string) {
  const subscriptions = [{ checkId, activated: true }];
  const channel = (type: string, config: Record<string, unknown>) =>
    api.ok<{ id: number }>('POST', '/v1/alert-channels', { type, config, subscriptions });
  return {
    webhook: await webhookChannel(api, receivers.hook, [checkId]),
    slack: await channel('SLACK', {
      url: `${receivers.slack.url}/services/T0001/B0001/slacktoken0123456789`,
      channel: '#alerts',
    }),
    pagerDuty: await channel('PAGERDUTY', {
      serviceKey: 'pd-routing-key-0123456789',
      account: 'outpost-e2e',
      serviceName: 'every-channel',
    }),
    opsgenie: await channel('OPSGENIE', {
      apiKey: 'og-api-key-0123456789abcdef',
      region: 'EU',
      priority: 'P2',
      name: 'ops',
    }),
    sms: await channel('SMS', { number: '+15550001111', name: 'on-call sms' }),
    call: await channel('CALL', { number: '+15550002222', name: 'on-call phone' }),
    email: await channel('EMAIL', { address: 'oncall@example.com' }),
  };
}

/** Awaits the failure alert at every provider and checks what each says; returns the incident keys. */
async function expectFailureEverywhere(
  r: Receivers,
  checkId: string,
): Promise<{ trigger: PagerDutyEvent; create: OpsgenieRequest }> {
  const hook = await r.hook.requests.next(hookOf(checkId, 'ALERT_FAILURE'), ARRIVAL_MS, 'the webhook failure alert');
  expect(hook.signatureValid).toBe(true);
  expect(hook.deliveryId).toEqual(expect.any(String));
  expect(hookBody(hook)).toMatchObject({
    checkName: 'every-channel',
    runLocation: 'alert-a',
    resultLink: expect.stringContaining(`/v1/check-results/${checkId}/`),
  });
  const slack = await r.slack.requests.next((req) => req.answered === 200, ARRIVAL_MS, 'the Slack failure alert');
  expect(JSON.stringify(slack.json)).toContain('every-channel');
  const trigger = (await r.pagerDuty.requests.next(() => true, ARRIVAL_MS, 'the PagerDuty trigger'))
    .json as PagerDutyEvent;
  expect(trigger).toMatchObject({
    routing_key: 'pd-routing-key-0123456789',
    event_action: 'trigger',
    dedup_key: expect.any(String),
  });
  expect(trigger.payload?.summary).toContain('every-channel');
  const create = await r.opsgenieEu.requests.next(() => true, ARRIVAL_MS, 'the Opsgenie create');
  expect(create).toMatchObject({
    action: 'create',
    answered: 202,
    alias: expect.any(String),
    headers: { authorization: 'GenieKey og-api-key-0123456789abcdef' },
  });
  expect(create.json).toMatchObject({ priority: 'P2', message: expect.stringContaining('every-channel') });
  for (const [gateway, path, number] of [
    [r.sms, '/sms', '+15550001111'],
    [r.voice, '/call', '+15550002222'],
  ] as const) {
    const sent = await gateway.requests.next(() => true, ARRIVAL_MS, `the request to ${path}`);
    expect(sent).toMatchObject({ answered: 200, url: path });
    expect(sent.body).toContain(number);
    expect(sent.body).toContain('every-channel');
  }
  const mail = await r.smtp.mails.next(() => true, ARRIVAL_MS, 'the email');
  expect(mail.envelopeTo).toEqual(['oncall@example.com']);
  expect(mail.subject).toContain('every-channel');
  for (const part of [mail.text, mail.html]) {
    for (const fact of ['every-channel', 'alert-a', `/v1/check-results/${checkId}/`]) expect(part).toContain(fact);
  }
  return { trigger, create };
}

/** So far, exactly one message per channel (Slack: one accepted, after its refused first attempt). */
function expectOneMessageEach(r: Receivers): void {
  expect(r.hook.requests.items.filter((req) => req.answered === 200)).toHaveLength(1);
  expect(r.slack.requests.items.filter((req) => req.answered === 200)).toHaveLength(1);
  for (const receiver of [r.pagerDuty, r.opsgenieEu, r.sms, r.voice]) expect(receiver.requests.items).toHaveLength(1);
  expect(r.smtp.mails.items).toHaveLength(1);
  expect(r.opsgenieUs.requests.items).toHaveLength(0);
}

/** Awaits `count` messages in all at each channel that gets every alert (PagerDuty and Opsgenie fold repeats). */
async function expectMessageCount(r: Receivers, count: number, what: string): Promise<void> {
  await r.slack.requests.waitFor(count, (req) => req.answered === 200, ARRIVAL_MS, `Slack: ${what}`);
  await r.sms.requests.waitFor(count, () => true, ARRIVAL_MS, `SMS: ${what}`);
  await r.voice.requests.waitFor(count, () => true, ARRIVAL_MS, `calls: ${what}`);
  await r.smtp.mails.waitFor(count, () => true, ARRIVAL_MS, `email: ${what}`);
}

/** The recovery closes the incident the failure opened, at PagerDuty (dedup_key) and Opsgenie (alias). */
async function expectIncidentClosed(r: Receivers, trigger: PagerDutyEvent, create: OpsgenieRequest): Promise<void> {
  const resolve = await r.pagerDuty.requests.next(
    (req) => (req.json as PagerDutyEvent).event_action === 'resolve',
    ARRIVAL_MS,
    'the PagerDuty resolve',
  );
  expect((resolve.json as PagerDutyEvent).dedup_key).toBe(trigger.dedup_key);
  expect(r.pagerDuty.requests.items.every((req) => (req.json as PagerDutyEvent).dedup_key === trigger.dedup_key)).toBe(
    true,
  );
  const close = await r.opsgenieEu.requests.next((req) => req.action === 'close', ARRIVAL_MS, 'the Opsgenie close');
  expect(close).toMatchObject({ alias: create.alias, answered: 202 });
  expect(
    r.opsgenieEu.requests.items.filter((req) => req.action === 'create').every((req) => req.alias === create.alias),
  ).toBe(true);
}

/** One entry per alert and channel: each channel's failure alert listed once, as SUCCESS. */
async function expectNotificationsListed(
  api: Api,
  checkId: string,
  failureId: string,
  channels: Record<string, { id: number }>,
): Promise<void> {
  const listed = await until(
    async () => {
      const all = await notificationsOf(api, checkId);
      const done = Object.values(channels).every((c) =>
        all.some((n) => n.alertChannelId === c.id && n.checkAlertId === failureId && n.status === 'SUCCESS'),
      );
      return done ? all : undefined;
    },
    { timeoutMs: ARRIVAL_MS, what: 'a SUCCESS notification of the failure alert on every channel' },
  );
  for (const c of Object.values(channels))
    expect(listed.filter((n) => n.alertChannelId === c.id && n.checkAlertId === failureId)).toHaveLength(1);
  expect(listed.find((n) => n.alertChannelId === channels.webhook?.id)).toMatchObject({
    type: 'WEBHOOK',
    checkId,
    checkResultId: expect.any(String),
  });
}

describe.concurrent('alerting end to end: nginx flips, real service and agents, local provider receivers', () => {
  let data: Awaited<ReturnType<typeof tempDir>>;
  let flip: FlipTarget;
  let service: { proc: Proc; url: string };
  let api: Api;
  const agents: Record<string, Proc> = {};
  const locationKeys: Record<string, string> = {};
  const receivers = {} as Receivers;
  const closers: Array<() => Promise<unknown>> = [];

  const agentFor = (slug: string) =>
    startAgent({ API_KEY: locationKeys[slug]!, API_URL: service.url, SPOOL_DIR: `${data.dir}/spool-${slug}` });

  beforeAll(async () => {
    data = await tempDir('e2e-alerting');
    flip = await startFlipTarget();
    Object.assign(receivers, await startReceivers());
    for (const r of Object.values(receivers)) closers.push(r.close);
    service = await startService({
      DATA_DIR: `${data.dir}/service`,
      OUTBOUND_ALLOW: '127.0.0.1',
      SMTP_URL: receivers.smtp.url,
      SMTP_FROM: 'Outpost alerts <alerts@outpost.test>',
      ALERT_PAGERDUTY_EVENTS_URL: `${receivers.pagerDuty.url}/v2/enqueue`,
      ALERT_OPSGENIE_US_URL: receivers.opsgenieUs.url,
      ALERT_OPSGENIE_EU_URL: receivers.opsgenieEu.url,
      ALERT_SMS_GATEWAY_URL: `${receivers.sms.url}/sms`,
      ALERT_VOICE_GATEWAY_URL: `${receivers.voice.url}/call`,
      // Retries of a failed delivery come quickly, so the retry below fits in the test.
      NOTIFY_BACKOFF_BASE_MS: '500',
      NOTIFY_POLL_MS: '500',
    });
    api = new Api(service.url, await createAccount(`${data.dir}/service`));
    for (const slug of ['alert-a', 'alert-b']) {
      locationKeys[slug] = (await api.createLocation(slug)).key;
      agents[slug] = agentFor(slug);
    }
  }, 120_000);

  afterAll(async () => {
    for (const agent of Object.values(agents)) await agent.stop();
    await service?.proc.stop();
    for (const close of closers) await close();
    await flip?.stop();
    await data?.remove();
  });

  it(
    'every channel type: one failure alert after the threshold, two reminders a minute apart, one recovery',
    async () => {
      const settings = { runBasedEscalation: { failedRunThreshold: 2 }, reminders: { amount: 2, interval: 1 } };
      const check = await api.createApiCheck(apiCheck('every-channel', flip, ['alert-a'], settings, ['e2e-alerts']));
      const channels = await everyChannel(api, receivers, check.id);
      await awaitResults(api, check.id, passingAt('alert-a'), 1);

      // Slack's first attempt fails: the delivery is retried.
      receivers.slack.faults.failNext(1);
      const flippedAt = Date.now();
      flip.setFailing('every-channel', true);
      const failure = await awaitAlert(api, check.id, 'ALERT_FAILURE');
      // Raised by the second failing run (failedRunThreshold 2), not the first.
      const failedBefore = (await awaitResults(api, check.id, failingSince(flippedAt), 2)).filter(
        (r) => Date.parse(String(r.stoppedAt)) <= Date.parse(failure.created_at),
      );
      expect(failedBefore).toHaveLength(2);
      const { trigger, create } = await expectFailureEverywhere(receivers, check.id);
      expect(receivers.slack.requests.items.map((r) => r.answered).slice(0, 2)).toEqual([500, 200]);
      // Two more failing runs later (well before the first reminder), still one message per channel.
      await awaitResults(api, check.id, failingSince(Date.parse(failure.created_at) + 1), 2);
      expectOneMessageEach(receivers);

      // Reminders: one interval (1 minute) after the alert, then another.
      const reminders = await receivers.hook.requests.waitFor(
        2,
        hookOf(check.id, 'ALERT_FAILURE_REMAIN'),
        3 * MINUTE,
        'two webhook reminders',
      );
      expect(reminders[0]!.receivedAt - Date.parse(failure.created_at)).toBeGreaterThanOrEqual(MINUTE - 1000);
      expect(reminders[1]!.receivedAt - reminders[0]!.receivedAt).toBeGreaterThanOrEqual(MINUTE - 5000);
      await expectMessageCount(receivers, 3, 'the alert and two reminders');

      flip.setFailing('every-channel', false);
      await awaitAlert(api, check.id, 'ALERT_RECOVERY');
      // The history holds the reminders too (the reference's ALERT_FAILURE_REMAIN).
      expect((await alertsOf(api, check.id)).map((a) => a.alertType)).toEqual([
        'ALERT_FAILURE',
        'ALERT_FAILURE_REMAIN',
        'ALERT_FAILURE_REMAIN',
        'ALERT_RECOVERY',
      ]);
      await receivers.hook.requests.next(hookOf(check.id, 'ALERT_RECOVERY'), ARRIVAL_MS, 'the webhook recovery');
      await expectIncidentClosed(receivers, trigger, create);
      await expectMessageCount(receivers, 4, 'the recovery');
      const hooks = receivers.hook.requests.items.filter((r) => r.answered === 200).map((r) => hookBody(r).alertType);
      expect(hooks).toEqual(['ALERT_FAILURE', 'ALERT_FAILURE_REMAIN', 'ALERT_FAILURE_REMAIN', 'ALERT_RECOVERY']);
      expect(receivers.hook.requests.items.every((r) => r.signatureValid)).toBe(true);
      await expectNotificationsListed(api, check.id, failure.id, channels);
    },
    5 * MINUTE,
  );

  it(
    'two locations: the parallel-run failure threshold decides, and one alert goes out per transition, not per location',
    async () => {
      const both = ['alert-a', 'alert-b'];
      const all = await api.createApiCheck(
        apiCheck('multi', flip, both, { parallelRunFailureThreshold: { enabled: true, percentage: 100 } }),
      );
      const half = await api.createApiCheck({
        ...apiCheck('multi', flip, both, { parallelRunFailureThreshold: { enabled: true, percentage: 50 } }),
        name: 'multi-half',
      });
      await webhookChannel(api, receivers.multi, [all.id, half.id]);
      for (const check of [all, half]) for (const slug of both) await awaitResults(api, check.id, passingAt(slug), 1);

      // Location B goes quiet (its agent stops), then the target fails: only A reports the failure.
      await agents['alert-b']!.stop();
      const flippedAt = Date.now();
      flip.setFailing('multi', true);
      await awaitAlert(api, half.id, 'ALERT_FAILURE');
      await awaitResults(api, all.id, failingSince(flippedAt, 'alert-a'), 2);
      // Half the locations failing is enough for 50 %, not for 100 %.
      expect(transitions(await alertsOf(api, all.id))).toEqual([]);

      agents['alert-b'] = agentFor('alert-b');
      const allFailed = await awaitAlert(api, all.id, 'ALERT_FAILURE');
      expect(allFailed.runLocation).toBe('alert-b');
      await awaitResults(api, all.id, failingSince(Date.parse(allFailed.created_at) + 1), 2);

      flip.setFailing('multi', false);
      for (const check of [all, half]) await awaitAlert(api, check.id, 'ALERT_RECOVERY');
      for (const check of [all, half])
        expect(transitions(await alertsOf(api, check.id))).toEqual(['ALERT_FAILURE', 'ALERT_RECOVERY']);

      for (const check of [all, half]) {
        await receivers.multi.requests.next(
          hookOf(check.id, 'ALERT_RECOVERY'),
          ARRIVAL_MS,
          `the recovery of ${check.id}`,
        );
        const sent = receivers.multi.requests.items
          .filter((r) => r.answered === 200 && hookBody(r).checkId === check.id)
          .map((r) => hookBody(r).alertType);
        expect(sent).toEqual(['ALERT_FAILURE', 'ALERT_RECOVERY']);
      }
      const allFailure = receivers.multi.requests.items.find(hookOf(all.id, 'ALERT_FAILURE'));
      expect(hookBody(allFailure!).runLocation).toBe('alert-b');
    },
    3 * MINUTE,
  );

  it(
    'a maintenance window over the check tag suppresses its notifications, while the history keeps the alert',
    async () => {
      const covered = await api.createApiCheck(apiCheck('maintenance', flip, ['alert-a'], {}, ['in-maintenance']));
      const control = await api.createApiCheck({
        ...apiCheck('maintenance', flip, ['alert-a'], {}, ['not-in-maintenance']),
        name: 'maintenance-control',
      });
      const channel = await webhookChannel(api, receivers.maintenance, [covered.id, control.id]);
      await api.ok('POST', '/v1/maintenance-windows', {
        name: 'planned work',
        tags: ['in-maintenance'],
        startsAt: new Date(Date.now() - 60 * MINUTE).toISOString(),
        endsAt: new Date(Date.now() + 60 * MINUTE).toISOString(),
        repeatUnit: null,
      });
      for (const check of [covered, control]) await awaitResults(api, check.id, passingAt('alert-a'), 1);

      flip.setFailing('maintenance', true);
      const suppressed = await awaitAlert(api, covered.id, 'ALERT_FAILURE');
      await awaitAlert(api, control.id, 'ALERT_FAILURE');
      flip.setFailing('maintenance', false);
      await awaitAlert(api, covered.id, 'ALERT_RECOVERY');
      await awaitAlert(api, control.id, 'ALERT_RECOVERY');
      // The suppressed check's history is complete.
      expect(transitions(await alertsOf(api, covered.id))).toEqual(['ALERT_FAILURE', 'ALERT_RECOVERY']);
      const listed = await api.ok<CheckAlert[]>('GET', '/v1/check-alerts?limit=100');
      expect(listed.map((a) => a.id)).toContain(suppressed.id);

      // The control check on the same channel was told both times; the covered one never was.
      await receivers.maintenance.requests.next(
        hookOf(control.id, 'ALERT_RECOVERY'),
        ARRIVAL_MS,
        'the control check recovery',
      );
      await until(
        async () =>
          (await notificationsOf(api, control.id)).filter(
            (n) => n.alertChannelId === channel.id && n.status === 'SUCCESS',
          ).length >= 2
            ? true
            : undefined,
        { timeoutMs: ARRIVAL_MS, what: 'the control check notifications listed' },
      );
      expect(receivers.maintenance.requests.items.filter((r) => hookBody(r)?.checkId === covered.id)).toEqual([]);
      expect(await notificationsOf(api, covered.id)).toEqual([]);
    },
    3 * MINUTE,
  );

  it(
    'a service killed (SIGKILL) while a webhook is being sent delivers it after the restart, once, under the same delivery id',
    async () => {
      // A service of its own (the others keep running), restarted on the same port and data dir.
      // A short send timeout keeps the lease of the send the kill interrupted (a few timeouts) short.
      const env = {
        DATA_DIR: `${data.dir}/crash-service`,
        PORT: String(await freePort()),
        OUTBOUND_ALLOW: '127.0.0.1',
        NOTIFY_BACKOFF_BASE_MS: '500',
        NOTIFY_POLL_MS: '500',
        NOTIFY_TIMEOUT_MS: '5000',
      };
      let crashed = await startService(env);
      const crashApi = new Api(crashed.url, await createAccount(env.DATA_DIR));
      const agent = startAgent({
        API_KEY: (await crashApi.createLocation('crash')).key,
        API_URL: crashed.url,
        SPOOL_DIR: `${data.dir}/spool-crash`,
      });
      try {
        const check = await crashApi.createApiCheck(apiCheck('crash', flip, ['crash']));
        const channel = await webhookChannel(crashApi, receivers.crash, [check.id]);
        await awaitResults(crashApi, check.id, passingAt('crash'), 1);

        const release = receivers.crash.faults.stall();
        flip.setFailing('crash', true);
        const failure = await awaitAlert(crashApi, check.id, 'ALERT_FAILURE');
        // The failing result is stored and its webhook is at the receiver, unanswered: kill the service now.
        const isFailure = (r: ReceivedWebhook) =>
          hookBody(r)?.checkId === check.id && hookBody(r).alertType === 'ALERT_FAILURE';
        const held = await receivers.crash.arrived.next(isFailure, ARRIVAL_MS, 'the stalled failure webhook');
        await crashed.proc.stop('SIGKILL');
        await receivers.crash.requests.next(
          (r) => r.deliveryId === held.deliveryId && r.answered === null,
          ARRIVAL_MS,
          'the stalled webhook abandoned',
        );
        release();
        crashed = await startService(env);

        const delivered = await receivers.crash.requests.next(
          (r) => r.deliveryId === held.deliveryId && r.answered === 200,
          2 * ARRIVAL_MS,
          'the re-sent failure webhook',
        );
        expect(delivered.signatureValid).toBe(true);
        flip.setFailing('crash', false);
        await awaitAlert(crashApi, check.id, 'ALERT_RECOVERY');
        await receivers.crash.requests.next(hookOf(check.id, 'ALERT_RECOVERY'), ARRIVAL_MS, 'the recovery webhook');
        // Each delivery id was answered once: the alert arrived once, its re-send carried the same id.
        expect([...receivers.crash.deliveredCounts().values()].every((n) => n === 1)).toBe(true);
        expect(receivers.crash.requests.items.filter((r) => isFailure(r) && r.answered === 200)).toHaveLength(1);
        expect(receivers.crash.requests.items.every((r) => r.signatureValid)).toBe(true);
        const listed = await notificationsOf(crashApi, check.id);
        expect(
          listed.some(
            (n) => n.checkAlertId === failure.id && n.alertChannelId === channel.id && n.status === 'SUCCESS',
          ),
        ).toBe(true);
      } finally {
        await agent.stop();
        await crashed.proc.stop();
      }
    },
    3 * MINUTE,
  );
});
