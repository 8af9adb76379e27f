/**
 * WEBHOOK alert channels against a real receiver on 127.0.0.1: the rendered request (method, URL,
 * query, headers, body), the vendor's variables and helpers, the HMAC signature, and what a broken
 * template or a refused address comes to.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { sendWebhookAlert } from '../../../src/service/notify/channels/webhook.ts';
import { DELIVERY_HEADER, SIGNATURE_HEADER, verifyWebhookSignature } from '../../../src/service/notify/webhook.ts';
import { startWebhookReceiver, type WebhookReceiver } from '../../helpers/notify-receivers.ts';
import { alertMessage, channel, guardedDispatcher, NOW, sendContext } from './fixtures.ts';

let receiver: WebhookReceiver;
beforeEach(async () => {
  receiver = await startWebhookReceiver('/alerts');
});
afterEach(async () => {
  await receiver.close();
});

type WebhookConfig = Parameters<typeof channel<'WEBHOOK'>>[1];
const webhook = (config: Partial<WebhookConfig>) =>
  channel('WEBHOOK', { url: receiver.url, method: 'POST', headers: [], queryParameters: [], ...config });

/** Sends one alert with `template` and gives the body the receiver got for it. */
async function render(template: string, overrides = {}): Promise<string> {
  const before = receiver.hooks.items.length;
  const outcome = await sendWebhookAlert(alertMessage(overrides), webhook({ template }), sendContext());
  expect(outcome).toEqual({ ok: true });
  return (await receiver.hooks.at(before)).body;
}

describe('WEBHOOK request', () => {
  it('renders the URL, query parameters, headers and body, and signs the exact body sent', async () => {
    const secret = 'whsec_test';
    const template = '{"title":"{{ALERT_TITLE}}","check":"{{CHECK_ID}}","link":"{{RESULT_LINK}}"}';
    const config = {
      method: 'PUT' as const,
      url: `${receiver.url}/{{CHECK_TYPE}}?fixed=1`,
      headers: [{ key: 'Authorization', value: 'Bearer {{ALERT_TYPE}}-token' }],
      queryParameters: [{ key: 'check', value: '{{CHECK_NAME}}' }],
      template,
      webhookSecret: secret,
    };
    const outcome = await sendWebhookAlert(alertMessage(), webhook(config), sendContext());
    expect(outcome).toEqual({ ok: true });
    const hook = await receiver.hooks.next();
    expect(hook.method).toBe('PUT');
    expect(hook.url).toBe('/alerts/API?fixed=1&check=Checkout+API');
    expect(hook.headers.authorization).toBe('Bearer ALERT_FAILURE-token');
    expect(hook.headers['content-type']).toBe('application/json');
    expect(hook.headers[DELIVERY_HEADER]).toBe('ntf_0123456789');
    expect(JSON.parse(hook.body)).toEqual({
      title: 'Check &quot;Checkout API&quot; has failed',
      check: alertMessage().checkId,
      link: alertMessage().resultUrl,
    });
    const signature = hook.headers[SIGNATURE_HEADER] as string;
    expect(signature).toMatch(new RegExp(`^t=${NOW / 1000},v1=[0-9a-f]{64}$`));
    expect(verifyWebhookSignature(secret, signature, hook.body, { now: NOW })).toBe(true);
    expect(verifyWebhookSignature('another secret', signature, hook.body, { now: NOW })).toBe(false);
  });

  it('sends the alert facts as JSON when the channel has no template, and no signature without a secret', async () => {
    expect(await sendWebhookAlert(alertMessage(), webhook({}), sendContext())).toEqual({ ok: true });
    const hook = await receiver.hooks.next();
    expect(hook.headers[SIGNATURE_HEADER]).toBeUndefined();
    expect(hook.headers[DELIVERY_HEADER]).toBe('ntf_0123456789');
    const m = alertMessage();
    expect(JSON.parse(hook.body)).toEqual({
      title: 'Check "Checkout API" has failed',
      alertType: 'ALERT_FAILURE',
      notificationId: m.notificationId,
      alertId: 42,
      checkId: m.checkId,
      checkName: 'Checkout API',
      checkType: 'API',
      groupName: 'Payments',
      tags: m.tags,
      runLocation: 'eu-west-1',
      responseTime: 1234,
      error: 'expected status 200, got 500',
      statusCode: '500',
      resultId: m.resultId,
      resultUrl: m.resultUrl,
      startedAt: m.startedAt,
      createdAt: m.createdAt,
      sslDaysRemaining: null,
    });
  });

  it.each(['GET', 'HEAD', 'DELETE'] as const)('%s sends no body, and signs the empty body', async (method) => {
    const outcome = await sendWebhookAlert(
      alertMessage(),
      webhook({ method, template: '{"a":1}', webhookSecret: 's' }),
      sendContext(),
    );
    expect(outcome).toEqual({ ok: true });
    const hook = await receiver.hooks.next();
    expect(hook.method).toBe(method);
    expect(hook.body).toBe('');
    expect(hook.headers['content-length'] ?? '0').toBe('0');
    expect(verifyWebhookSignature('s', hook.headers[SIGNATURE_HEADER] as string, '', { now: NOW })).toBe(true);
  });
});

describe('WEBHOOK template variables', () => {
  it('fills every variable the vendor documents that an alert has a value for', async () => {
    const names = [
      'ALERT_TITLE',
      'ALERT_TYPE',
      'API_CHECK_RESPONSE_STATUS_CODE',
      'API_CHECK_RESPONSE_STATUS_TEXT',
      'CHECK_ERROR_MESSAGE',
      'CHECK_ID',
      'CHECK_NAME',
      'CHECK_RESULT_ID',
      'CHECK_TYPE',
      'GROUP_NAME',
      'IS_REMINDER',
      'REGION',
      'REMINDER_SEQUENCE',
      'RESPONSE_TIME',
      'RESULT_LINK',
      'RUN_LOCATION',
      'SSL_DAYS_REMAINING',
      'STARTED_AT',
      'TIMESTAMP',
      'ALERT_ID',
      'NOTIFICATION_ID',
      'CHECK_DESCRIPTION',
      'SSL_CHECK_DOMAIN',
      'AI_ANALYSIS_ROOT_CAUSE',
    ];
    const body = await render(names.map((n) => `${n}={{{${n}}}}`).join('\n'));
    const m = alertMessage();
    expect(body.split('\n')).toEqual([
      'ALERT_TITLE=Check "Checkout API" has failed',
      'ALERT_TYPE=ALERT_FAILURE',
      'API_CHECK_RESPONSE_STATUS_CODE=500',
      'API_CHECK_RESPONSE_STATUS_TEXT=Internal Server Error',
      'CHECK_ERROR_MESSAGE=expected status 200, got 500',
      `CHECK_ID=${m.checkId}`,
      'CHECK_NAME=Checkout API',
      `CHECK_RESULT_ID=${m.resultId}`,
      'CHECK_TYPE=API',
      'GROUP_NAME=Payments',
      'IS_REMINDER=false',
      'REGION=eu-west-1',
      'REMINDER_SEQUENCE=0',
      'RESPONSE_TIME=1234',
      `RESULT_LINK=${m.resultUrl}`,
      'RUN_LOCATION=eu-west-1',
      'SSL_DAYS_REMAINING=',
      `STARTED_AT=${m.startedAt}`,
      `TIMESTAMP=${m.createdAt}`,
      'ALERT_ID=42',
      `NOTIFICATION_ID=${m.notificationId}`,
      'CHECK_DESCRIPTION=',
      'SSL_CHECK_DOMAIN=',
      'AI_ANALYSIS_ROOT_CAUSE=',
    ]);
  });

  it('says so for reminders and SSL alerts', async () => {
    expect(await render('{{IS_REMINDER}} {{ALERT_TITLE}}', { alertType: 'ALERT_FAILURE_REMAIN' })).toBe(
      'true Check &quot;Checkout API&quot; is still failing',
    );
    expect(
      await render('{{{ALERT_TITLE}}} / {{SSL_DAYS_REMAINING}}', { alertType: 'ALERT_SSL', sslDaysRemaining: 7 }),
    ).toBe('The SSL certificate of check "Checkout API" will expire in 7 days / 7');
  });

  it('HTML-escapes {{X}} so a quote cannot break a JSON body, and inserts {{{X}}} as is', async () => {
    const body = await render('{"a":"{{CHECK_NAME}}","b":"{{{CHECK_NAME}}}"}', { checkName: 'Say "hi" & <go>' });
    expect(body).toBe('{"a":"Say &quot;hi&quot; &amp; &lt;go&gt;","b":"Say "hi" & <go>"}');
  });

  it('renders the TAGS array with #each, as the vendor\'s Opsgenie example does ({{this}} escapes "=", {{{this}}} does not)', async () => {
    const body = await render(
      '{"tags":[{{#each TAGS}}"{{this}}"{{#unless @last}},{{/unless}}{{/each}}],"raw":"{{{TAGS.[1]}}}"}',
    );
    expect(JSON.parse(body)).toEqual({ tags: ['team:payments', 'env&#x3D;production', 'P1'], raw: 'env=production' });
  });
});

describe('WEBHOOK template helpers', () => {
  it.each([
    ['{{tagValue TAGS "team" "UNKNOWN"}}', 'payments'],
    ['{{tagValue TAGS "env"}}', 'production'],
    ['{{tagValue TAGS "owner" "UNKNOWN"}}', 'UNKNOWN'],
    ['{{#startsWith CHECK_NAME "Checkout"}}yes{{else}}no{{/startsWith}}', 'yes'],
    ['{{startsWith CHECK_NAME "Home"}}', 'false'],
    ['{{replace CHECK_NAME "API" "service"}}', 'Checkout service'],
    ['{{split "a,b,c" "," 1}}', 'b'],
    ['{{year}} {{year 2}}', '2026 26'],
    ['{{date "YYYY-MM-DD"}}', '2026-07-24'],
    ['{{date}}', 'July 24, 2026'],
    ['{{date "2026-07-24" "MMMM DD, YYYY"}}', 'July 24, 2026'],
    ['{{moment "2 days ago" "YYYY-MM-DD"}}', '2026-07-22'],
    ['{{moment "yesterday" "YYYY-MM-DD"}}', '2026-07-23'],
    ['{{moment "in 3 hours" "HH:mm"}}', '13:00'],
    ['{{moment "last week" "X"}}', String(NOW / 1000 - 7 * 86_400)],
    ['{{#eq ALERT_TYPE "ALERT_FAILURE"}}DOWN{{/eq}}{{#eq ALERT_TYPE "ALERT_RECOVERY"}}UP{{/eq}}', 'DOWN'],
    ['{{#if (eq ALERT_TYPE "ALERT_RECOVERY")}}UP{{else}}DOWN{{/if}}', 'DOWN'],
    ['{{#is RESPONSE_TIME "1234"}}loose{{/is}}{{#isnt RESPONSE_TIME "1"}} differs{{/isnt}}', 'loose differs'],
    ['{{#gt RESPONSE_TIME 1000}}slow{{else}}fast{{/gt}} {{#lte RESPONSE_TIME 1000}}x{{else}}y{{/lte}}', 'slow y'],
    ['{{#gte 2 2}}a{{/gte}}{{#lt 1 2}}b{{/lt}}', 'ab'],
    ['{{#compare RESPONSE_TIME ">" 500}}over{{/compare}}', 'over'],
    ['{{#and CHECK_ID GROUP_NAME}}both{{/and}} {{#or AI_ANALYSIS_LINK CHECK_ID}}either{{/or}}', 'both either'],
    ['{{#not IS_REMINDER}}first{{/not}} {{#neither AI_ANALYSIS_LINK SSL_CHECK_DOMAIN}}none{{/neither}}', 'first none'],
    ['{{#isTruthy CHECK_ID}}t{{/isTruthy}}{{#isFalsey CHECK_DESCRIPTION}}f{{/isFalsey}}', 'tf'],
    ['{{#contains TAGS "P1"}}"1"{{else}}"3"{{/contains}}', '"1"'],
    ['{{#has TAGS "P2"}}yes{{else}}no{{/has}}', 'no'],
    ['{{default GROUP_NAME "none"}}/{{default AI_ANALYSIS_LINK "x"}}', 'Payments/'],
    [
      '{{#ifEven RESPONSE_TIME}}even{{else}}odd{{/ifEven}} {{#ifOdd 3}}odd{{/ifOdd}} {{#ifNth 3 9}}nth{{/ifNth}}',
      'even odd nth',
    ],
    ['{{#unlessEq ALERT_TYPE "ALERT_RECOVERY"}}not recovered{{/unlessEq}}', 'not recovered'],
    [
      '{{#unlessGt 1 2}}a{{/unlessGt}}{{#unlessGteq 1 1}}b{{else}}c{{/unlessGteq}}{{#unlessLt 2 1}}d{{/unlessLt}}{{#unlessLteq 3 2}}e{{/unlessLteq}}',
      'acde',
    ],
  ])('%s renders %s', async (template, expected) => {
    expect(await render(template)).toBe(expected);
  });

  it('json writes a value as JSON, unescaped for HTML, so any check name keeps the body valid', async () => {
    const body = await render(
      '{"name":{{json CHECK_NAME}},"tags":{{json TAGS}},"ssl":{{json SSL_DAYS_REMAINING}},"rt":{{json RESPONSE_TIME}} }',
      {
        checkName: 'Say "hi" & <go>\n',
      },
    );
    expect(JSON.parse(body)).toEqual({ name: 'Say "hi" & <go>\n', tags: alertMessage().tags, ssl: '', rt: 1234 });
  });

  it('$UUID gives a random v4 UUID and $RANDOM_NUMBER an integer from 0 to 10000', async () => {
    const [uuid, number] = (await render('{{$UUID}} {{$RANDOM_NUMBER}}')).split(' ');
    expect(uuid).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(Number(number)).toBeGreaterThanOrEqual(0);
    expect(Number(number)).toBeLessThanOrEqual(10_000);
    expect(Number.isInteger(Number(number))).toBe(true);
  });
});

describe('WEBHOOK failures', () => {
  it.each([
    ['an unclosed block', '{"a": "{{#if CHECK_ID}}x"}', /^the webhook template does not render: .*if/s],
    [
      'a helper given a date it cannot read',
      '{{date "not a date" "YYYY"}}',
      /^the webhook template does not render: date: cannot read "not a date"/,
    ],
    ['an unknown compare operator', '{{#compare 1 "~" 2}}x{{/compare}}', /compare: unknown operator "~"/],
  ])('%s is a permanent failure naming the template error, and nothing is sent', async (_what, template, error) => {
    // Twice: compiled templates are kept for the next alert, and a broken one must not be kept as good.
    for (const _ of [1, 2]) {
      const outcome = await sendWebhookAlert(alertMessage(), webhook({ template }), sendContext());
      expect(outcome).toMatchObject({ ok: false, permanent: true, error: expect.stringMatching(error) });
    }
    expect(receiver.hooks.items).toHaveLength(0);
  });

  it('a template whose helper fails on one alert still renders the next one', async () => {
    const template = '{"started":"{{date STARTED_AT "YYYY"}}"}';
    const bad = await sendWebhookAlert(alertMessage({ startedAt: 'never' }), webhook({ template }), sendContext());
    expect(bad).toMatchObject({ ok: false, permanent: true });
    expect(await render(template, { startedAt: '2026-11-23T10:00:00.000Z' })).toBe('{"started":"2026"}');
  });

  it('a URL that is no URL once rendered is a permanent failure', async () => {
    const outcome = await sendWebhookAlert(alertMessage(), webhook({ url: '{{GROUP_NAME}}/hook' }), sendContext());
    expect(outcome).toMatchObject({
      ok: false,
      permanent: true,
      error: expect.stringMatching(/^the webhook URL is not a URL once rendered/),
    });
  });

  it('a header value with a line break is a permanent failure', async () => {
    const outcome = await sendWebhookAlert(
      alertMessage({ error: 'a\r\nX-Injected: 1' }),
      webhook({ headers: [{ key: 'x-error', value: '{{CHECK_ERROR_MESSAGE}}' }] }),
      sendContext(),
    );
    expect(outcome).toMatchObject({ ok: false, permanent: true });
    expect(receiver.hooks.items).toHaveLength(0);
  });

  it('a loopback address the outbound guard does not allow is refused, permanently, without connecting', async () => {
    const outcome = await sendWebhookAlert(
      alertMessage(),
      webhook({}),
      sendContext({ dispatcher: guardedDispatcher(null) }),
    );
    expect(outcome).toEqual({
      ok: false,
      permanent: true,
      error: 'refused: 127.0.0.1 is a loopback address; allow it with OUTBOUND_ALLOW',
    });
    expect(receiver.hooks.items).toHaveLength(0);
  });
});
