/**
 * SLACK, PAGERDUTY, OPSGENIE, SMS and CALL channels against a real receiver on 127.0.0.1 standing
 * in for each provider (the provider URLs point at it): the exact request each provider would see.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { sendOpsgenieAlert } from '../../../src/service/notify/channels/opsgenie.ts';
import { sendPagerDutyAlert } from '../../../src/service/notify/channels/pagerduty.ts';
import { sendCallAlert, sendSmsAlert } from '../../../src/service/notify/channels/phone.ts';
import { sendSlackAlert } from '../../../src/service/notify/channels/slack.ts';
import type { AlertType } from '../../../src/service/store/check-status-types.ts';
import { startWebhookReceiver, type WebhookReceiver } from '../../helpers/notify-receivers.ts';
import { alertMessage, channel, sendContext } from './fixtures.ts';

let receiver: WebhookReceiver;
beforeEach(async () => {
  receiver = await startWebhookReceiver('/');
});
afterEach(async () => {
  await receiver.close();
});
const origin = () => receiver.url.replace(/\/$/, '');
const lastHook = async () => {
  const hook = await receiver.hooks.next();
  return { ...hook, json: JSON.parse(hook.body) as Record<string, unknown> };
};

describe('SLACK', () => {
  const slack = (extra: { channel?: string } = {}) =>
    channel('SLACK', { url: `${origin()}/services/T000/B000/XXXX`, ...extra });

  it('posts an incoming-webhook message: text, and an attachment coloured by alert type holding the blocks', async () => {
    const m = alertMessage({ error: 'expected <200> & got 500' });
    expect(await sendSlackAlert(m, slack({ channel: '#ops' }), sendContext())).toEqual({ ok: true });
    const hook = await lastHook();
    expect(hook).toMatchObject({ method: 'POST', url: '/services/T000/B000/XXXX' });
    expect(hook.headers['content-type']).toBe('application/json');
    expect(hook.json).toMatchObject({ channel: '#ops', text: 'Check "Checkout API" has failed' });
    const [attachment] = hook.json.attachments as {
      color: string;
      fallback: string;
      blocks: { type: string; text?: { text: string }; fields?: { text: string }[] }[];
    }[];
    expect(attachment?.color).toBe('#D0021B');
    expect(attachment?.fallback).toBe(`Check "Checkout API" has failed: ${m.resultUrl}`);
    expect(attachment?.blocks[0]?.text?.text).toBe(`*<${m.resultUrl}|Check "Checkout API" has failed>*`);
    const fields = attachment?.blocks[1]?.fields?.map((f) => f.text);
    expect(fields).toContain('*Location*\neu-west-1');
    expect(fields).toContain('*Error*\nexpected &lt;200&gt; &amp; got 500');
    expect(fields).toContain('*Response time*\n1234 ms');
    expect(fields?.length).toBeLessThanOrEqual(10);
  });

  it.each([
    ['ALERT_DEGRADED', '#F5A623'],
    ['ALERT_RECOVERY', '#2EB67D'],
    ['ALERT_DEGRADED_RECOVERY', '#2EB67D'],
    ['ALERT_SSL', '#F5A623'],
  ] as [AlertType, string][])('%s is coloured %s, and no channel is sent unless set', async (alertType, colour) => {
    await sendSlackAlert(alertMessage({ alertType, sslDaysRemaining: 5 }), slack(), sendContext());
    const hook = await lastHook();
    expect((hook.json.attachments as { color: string }[])[0]?.color).toBe(colour);
    expect(hook.json).not.toHaveProperty('channel');
  });

  it("Slack's 404 channel_not_found is a permanent failure that keeps Slack's answer", async () => {
    receiver.script.push({ status: 404, body: 'channel_not_found' });
    expect(await sendSlackAlert(alertMessage(), slack(), sendContext())).toEqual({
      ok: false,
      permanent: true,
      error: 'Slack answered HTTP 404',
      detail: 'channel_not_found',
    });
  });
});

describe('PAGERDUTY', () => {
  const pd = channel('PAGERDUTY', { serviceKey: 'R0UT1NGKEY', account: 'acme', serviceName: 'Checkout' });
  const ctx = () => sendContext({ providers: { pagerDutyEventsUrl: `${origin()}/v2/enqueue` } });

  it('a failure triggers an event with the incident key as dedup_key', async () => {
    receiver.script.push({
      status: 202,
      body: '{"status":"success","message":"Event processed","dedup_key":"outpost-check-x"}',
    });
    const m = alertMessage();
    expect(await sendPagerDutyAlert(m, pd, ctx())).toEqual({
      ok: true,
      detail: '{"status":"success","message":"Event processed","dedup_key":"outpost-check-x"}',
    });
    const hook = await lastHook();
    expect(hook).toMatchObject({ method: 'POST', url: '/v2/enqueue' });
    expect(hook.headers['content-type']).toBe('application/json');
    expect(hook.json).toEqual({
      routing_key: 'R0UT1NGKEY',
      event_action: 'trigger',
      dedup_key: m.incidentKey,
      client: 'Outpost',
      client_url: m.resultUrl,
      payload: {
        summary: 'Check "Checkout API" has failed: expected status 200, got 500',
        source: 'eu-west-1',
        severity: 'critical',
        timestamp: m.createdAt,
        component: 'Checkout API',
        group: 'Payments',
        class: 'API',
        custom_details: expect.objectContaining({
          Location: 'eu-west-1',
          Error: 'expected status 200, got 500',
          Result: m.resultUrl,
        }),
      },
      links: [{ href: m.resultUrl, text: 'Check result' }],
    });
  });

  it.each(['ALERT_RECOVERY', 'ALERT_DEGRADED_RECOVERY'] as AlertType[])(
    '%s resolves the incident the failure opened',
    async (alertType) => {
      const m = alertMessage({ alertType });
      await sendPagerDutyAlert(m, pd, ctx());
      expect((await lastHook()).json).toEqual({
        routing_key: 'R0UT1NGKEY',
        event_action: 'resolve',
        dedup_key: m.incidentKey,
        client: 'Outpost',
        client_url: m.resultUrl,
      });
    },
  );

  it.each([
    ['ALERT_DEGRADED', 'warning', ''],
    ['ALERT_FAILURE_REMAIN', 'critical', ''],
    ['ALERT_SSL', 'warning', ':ssl'],
  ] as [AlertType, string, string][])('%s triggers with severity %s', async (alertType, severity, suffix) => {
    const m = alertMessage({ alertType, sslDaysRemaining: 3 });
    await sendPagerDutyAlert(m, pd, ctx());
    const { json } = await lastHook();
    expect(json).toMatchObject({
      event_action: 'trigger',
      dedup_key: `${m.incidentKey}${suffix}`,
      payload: { severity },
    });
  });

  it('400 (invalid event) is permanent; 429 (rate limited) is retried', async () => {
    receiver.script.push({ status: 400, body: '{"status":"invalid event","message":"Event object is invalid"}' }, 429);
    expect(await sendPagerDutyAlert(alertMessage(), pd, ctx())).toMatchObject({
      ok: false,
      permanent: true,
      error: 'PagerDuty answered HTTP 400',
      detail: expect.stringContaining('invalid event'),
    });
    expect(await sendPagerDutyAlert(alertMessage(), pd, ctx())).toMatchObject({
      ok: false,
      permanent: false,
      error: 'PagerDuty answered HTTP 429',
    });
  });
});

describe('OPSGENIE', () => {
  const og = (region: 'US' | 'EU') => channel('OPSGENIE', { apiKey: 'genie-key-1', region, priority: 'P2' });
  const ctx = () => sendContext({ providers: { opsgenieApiUrl: { US: `${origin()}/us`, EU: `${origin()}/eu/` } } });

  it("a failure creates an alert in the channel's region, aliased by the incident key", async () => {
    receiver.script.push({ status: 202, body: '{"result":"Request will be processed","took":0.2,"requestId":"r1"}' });
    const m = alertMessage();
    expect(await sendOpsgenieAlert(m, og('EU'), ctx())).toMatchObject({
      ok: true,
      detail: expect.stringContaining('Request will be processed'),
    });
    const hook = await lastHook();
    expect(hook).toMatchObject({ method: 'POST', url: '/eu/v2/alerts' });
    expect(hook.headers.authorization).toBe('GenieKey genie-key-1');
    expect(hook.json).toEqual({
      message: 'Check "Checkout API" has failed',
      alias: m.incidentKey,
      description: `expected status 200, got 500\nLocation: eu-west-1\nResponse time: 1234 ms\nStarted at: ${m.startedAt}\n${m.resultUrl}`,
      priority: 'P2',
      tags: m.tags,
      details: expect.objectContaining({ Check: 'Checkout API (API)', Location: 'eu-west-1' }),
      entity: 'Checkout API',
      source: 'Outpost',
    });
  });

  it('a recovery closes the alert by its alias', async () => {
    const m = alertMessage({ alertType: 'ALERT_RECOVERY' });
    await sendOpsgenieAlert(m, og('US'), ctx());
    const hook = await lastHook();
    expect(hook).toMatchObject({ method: 'POST', url: `/us/v2/alerts/${m.incidentKey}/close?identifierType=alias` });
    expect(hook.headers.authorization).toBe('GenieKey genie-key-1');
    expect(hook.json).toEqual({ source: 'Outpost', note: `Check "Checkout API" has recovered: ${m.resultUrl}` });
  });

  it("a long message and too many or too long tags are cut to Opsgenie's limits; 422 is permanent", async () => {
    receiver.script.push({ status: 422, body: '{"message":"Request body is not processable"}' });
    const tags = [`long:${'t'.repeat(80)}`, ...Array.from({ length: 30 }, (_, i) => `tag${i}`)];
    const outcome = await sendOpsgenieAlert(alertMessage({ checkName: 'n'.repeat(200), tags }), og('US'), ctx());
    expect(outcome).toMatchObject({ ok: false, permanent: true, error: 'Opsgenie answered HTTP 422' });
    const { json } = await lastHook();
    expect((json.message as string).length).toBe(130);
    expect(json.tags).toHaveLength(20);
    expect((json.tags as string[])[0]).toBe(`long:${'t'.repeat(44)}…`);
    expect((json.tags as string[])[19]).toBe('tag18');
  });
});

describe('SMS and CALL', () => {
  const gateways = () => ({ smsGatewayUrl: new URL(`${origin()}/sms`), voiceGatewayUrl: new URL(`${origin()}/voice`) });

  it('an SMS is posted to the SMS gateway with the number, the text and the delivery id', async () => {
    const m = alertMessage();
    expect(
      await sendSmsAlert(m, channel('SMS', { number: '+4915112345678' }), sendContext({ providers: gateways() })),
    ).toEqual({ ok: true });
    const hook = await lastHook();
    expect(hook).toMatchObject({ method: 'POST', url: '/sms' });
    expect(hook.headers['x-outpost-delivery']).toBe(m.notificationId);
    expect(hook.json).toEqual({
      type: 'SMS',
      to: '+4915112345678',
      message: `Check "Checkout API" has failed (eu-west-1): expected status 200, got 500. ${m.resultUrl}`,
      alertType: 'ALERT_FAILURE',
      checkId: m.checkId,
      checkName: 'Checkout API',
      resultUrl: m.resultUrl,
      notificationId: m.notificationId,
    });
  });

  it('an SMS stays within 300 characters however long the error', async () => {
    await sendSmsAlert(
      alertMessage({ error: 'e'.repeat(5_000) }),
      channel('SMS', { number: '+15550100' }),
      sendContext({ providers: gateways() }),
    );
    const message = (await lastHook()).json.message as string;
    expect(message.length).toBeLessThanOrEqual(300);
    expect(message.endsWith(alertMessage().resultUrl)).toBe(true);
  });

  it('a call is posted to the voice gateway with words to read out', async () => {
    await sendCallAlert(
      alertMessage({ alertType: 'ALERT_RECOVERY' }),
      channel('CALL', { number: '+15550100' }),
      sendContext({ providers: gateways() }),
    );
    const hook = await lastHook();
    expect(hook.url).toBe('/voice');
    expect(hook.json).toMatchObject({
      type: 'CALL',
      to: '+15550100',
      message: 'Outpost alert. Check "Checkout API" has recovered (eu-west-1).',
    });
  });

  it.each([
    ['SMS', 'ALERT_SMS_GATEWAY_URL'],
    ['CALL', 'ALERT_VOICE_GATEWAY_URL'],
  ] as const)('%s without a gateway is a permanent failure naming %s', async (type, setting) => {
    const send = type === 'SMS' ? sendSmsAlert : sendCallAlert;
    const outcome = await send(alertMessage(), channel(type, { number: '+15550100' }) as never, sendContext());
    expect(outcome).toEqual({
      ok: false,
      permanent: true,
      error: `${setting} is not set, so the service cannot deliver ${type} alerts`,
    });
  });

  it("the gateway's 5xx is retried", async () => {
    receiver.script.push(503);
    const outcome = await sendSmsAlert(
      alertMessage(),
      channel('SMS', { number: '+15550100' }),
      sendContext({ providers: gateways() }),
    );
    expect(outcome).toEqual({ ok: false, permanent: false, error: 'the SMS gateway answered HTTP 503' });
  });
});
