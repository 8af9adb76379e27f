/**
 * The local provider receivers the alerting end-to-end tests rely on: each accepts what its
 * provider accepts, refuses what it refuses, and its fault controls (fail, stall) do what a retry
 * or crash test needs. Requests come from undici and nodemailer, as the service's would.
 */
import nodemailer from 'nodemailer';
import { request } from 'undici';
import { afterEach, describe, expect, it } from 'vitest';
import { DELIVERY_HEADER, SIGNATURE_HEADER, webhookSignature } from '../../src/service/notify/webhook.ts';
import {
  opsgenieRequest,
  startGatewayReceiver,
  startOpsgenieReceiver,
  startPagerDutyReceiver,
  startSlackReceiver,
  startSmtpReceiver,
  startWebhookReceiver,
} from './alert-receivers.ts';

const closers: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const close of closers.splice(0)) await close();
});

async function post(url: string, body: unknown, headers: Record<string, string> = {}, signal?: AbortSignal) {
  const res = await request(url, {
    method: 'POST',
    body: JSON.stringify(body),
    headers: { 'content-type': 'application/json', ...headers },
    signal,
  });
  return { status: res.statusCode, body: await res.body.text() };
}

function signed(secret: string, body: string, deliveryId: string): Record<string, string> {
  const t = Math.floor(Date.now() / 1000);
  return { [SIGNATURE_HEADER]: `t=${t},v1=${webhookSignature(secret, t, body)}`, [DELIVERY_HEADER]: deliveryId };
}

describe('webhook receiver', () => {
  it('accepts a correctly signed webhook, refuses a wrongly signed one, and counts deliveries per id', async () => {
    const hook = await startWebhookReceiver('whsec-right');
    closers.push(hook.close);
    const body = { alertType: 'ALERT_FAILURE' };
    const raw = JSON.stringify(body);
    expect((await post(`${hook.url}/hook`, body, signed('whsec-right', raw, 'd-1'))).status).toBe(200);
    expect((await post(`${hook.url}/hook`, body, signed('whsec-wrong', raw, 'd-2'))).status).toBe(401);
    const [good, bad] = await hook.requests.waitFor(2, () => true, 2000);
    expect(good).toMatchObject({ deliveryId: 'd-1', signatureValid: true, answered: 200, json: body });
    expect(bad).toMatchObject({ deliveryId: 'd-2', signatureValid: false, answered: 401 });
    expect(hook.deliveredCounts()).toEqual(new Map([['d-1', 1]]));
  });

  it('fails the next requests on demand, then answers again', async () => {
    const hook = await startWebhookReceiver('s');
    closers.push(hook.close);
    hook.faults.failNext(1);
    const raw = JSON.stringify({});
    expect((await post(hook.url, {}, signed('s', raw, 'd'))).status).toBe(500);
    expect((await post(hook.url, {}, signed('s', raw, 'd'))).status).toBe(200);
    expect(hook.deliveredCounts().get('d')).toBe(1);
  });

  it('holds requests while stalled: one whose sender gives up is recorded unanswered, the rest answered on release', async () => {
    const hook = await startWebhookReceiver('s');
    closers.push(hook.close);
    const release = hook.faults.stall();
    const raw = JSON.stringify({});
    const abandoned = post(hook.url, {}, signed('s', raw, 'gone'), AbortSignal.timeout(300)).catch((e: Error) => e);
    expect(await abandoned).toBeInstanceOf(Error);
    expect(await hook.requests.next((r) => r.deliveryId === 'gone', 2000)).toMatchObject({ answered: null });
    const held = post(hook.url, {}, signed('s', raw, 'held'));
    expect(await hook.arrived.next((r) => r.deliveryId === 'held', 2000)).toMatchObject({ answered: null });
    expect(hook.requests.items.some((r) => r.deliveryId === 'held')).toBe(false);
    release();
    expect((await held).status).toBe(200);
    expect(hook.deliveredCounts()).toEqual(new Map([['held', 1]]));
  });

  it('names what it waited for when nothing arrives in time', async () => {
    const hook = await startWebhookReceiver('s');
    closers.push(hook.close);
    await expect(hook.requests.next(() => true, 50, 'a failure alert')).rejects.toThrow(
      /timed out after 50 ms waiting for a failure alert/,
    );
  });
});

describe('provider receivers', () => {
  it('Slack: a message with text is ok, anything else invalid_payload', async () => {
    const slack = await startSlackReceiver();
    closers.push(slack.close);
    expect(await post(`${slack.url}/services/T/B/x`, { text: 'down' })).toEqual({ status: 200, body: 'ok' });
    expect(await post(`${slack.url}/services/T/B/x`, { txt: 'down' })).toEqual({
      status: 400,
      body: 'invalid_payload',
    });
  });

  it('PagerDuty: a trigger answers 202 with its dedup_key; a resolve without one is an invalid event', async () => {
    const pd = await startPagerDutyReceiver();
    closers.push(pd.close);
    const trigger = {
      routing_key: 'rk',
      event_action: 'trigger',
      dedup_key: 'outpost-check-1',
      payload: { summary: 's', source: 'outpost', severity: 'critical' },
    };
    const ok = await post(`${pd.url}/v2/enqueue`, trigger);
    expect(ok.status).toBe(202);
    expect(JSON.parse(ok.body)).toEqual({
      status: 'success',
      message: 'Event processed',
      dedup_key: 'outpost-check-1',
    });
    expect((await post(`${pd.url}/v2/enqueue`, { routing_key: 'rk', event_action: 'resolve' })).status).toBe(400);
    expect(
      (await post(`${pd.url}/v2/enqueue`, { ...trigger, payload: { ...trigger.payload, severity: 'bad' } })).status,
    ).toBe(400);
  });

  it('Opsgenie: create and close by alias with a GenieKey; no key is 401', async () => {
    const og = await startOpsgenieReceiver();
    closers.push(og.close);
    const auth = { authorization: 'GenieKey abc' };
    expect((await post(`${og.url}/v2/alerts`, { message: 'down', alias: 'outpost-check-1' }, auth)).status).toBe(202);
    expect(
      (await post(`${og.url}/v2/alerts/outpost-check-1/close?identifierType=alias`, { source: 'outpost' }, auth))
        .status,
    ).toBe(202);
    expect((await post(`${og.url}/v2/alerts`, { message: 'down' })).status).toBe(401);
    expect((await post(`${og.url}/v2/alerts`, { alias: 'x' }, auth)).status).toBe(422);
    const [create, close] = await og.requests.waitFor(2, () => true, 2000);
    expect([create?.action, create?.alias]).toEqual(['create', 'outpost-check-1']);
    expect([close?.action, close?.alias]).toEqual(['close', 'outpost-check-1']);
    expect(opsgenieRequest({ ...create!, url: '/v2/alerts/a/close' }).action).toBe('unknown');
  });

  it('SMS gateway: a JSON POST is queued', async () => {
    const sms = await startGatewayReceiver();
    closers.push(sms.close);
    expect((await post(sms.url, { to: '+15550001111', text: 'down' })).status).toBe(200);
    expect((await sms.requests.next(() => true, 2000)).json).toEqual({ to: '+15550001111', text: 'down' });
  });
});

describe('SMTP receiver', () => {
  it('parses the text and the HTML part of a multipart message, and refuses on demand with a 451', async () => {
    const smtp = await startSmtpReceiver();
    closers.push(smtp.close);
    const transport = nodemailer.createTransport({ url: smtp.url, ignoreTLS: true } as never);
    const mail = {
      from: 'alerts@outpost.test',
      to: 'oncall@example.com',
      subject: 'Check “api” has failed',
      text: 'The check api failed at location-a.\nhttp://x/v1/check-results/1/2',
      html: '<p>The check <b>api</b> failed at location-a.</p><a href="http://x/v1/check-results/1/2">result</a>',
      messageId: '<n-1@outpost.test>',
    };
    smtp.failNext(1);
    await expect(transport.sendMail(mail)).rejects.toMatchObject({ responseCode: 451 });
    await transport.sendMail(mail);
    const got = await smtp.mails.next(() => true, 5000);
    expect(got).toMatchObject({
      subject: mail.subject,
      text: mail.text,
      html: mail.html,
      messageId: mail.messageId,
      envelopeTo: ['oncall@example.com'],
    });
    transport.close();
  });
});
