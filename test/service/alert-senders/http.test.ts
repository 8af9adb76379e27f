/**
 * The one HTTP request every HTTP sender makes (src/service/notify/channels/http.ts), against a
 * real receiver on 127.0.0.1: which answers are success, which are worth another attempt, and
 * what of the answer is kept as `detail`.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { sendHttp } from '../../../src/service/notify/channels/http.ts';
import { startWebhookReceiver, type WebhookReceiver } from '../../helpers/notify-receivers.ts';
import { guardedDispatcher } from './fixtures.ts';

let receiver: WebhookReceiver;
beforeEach(async () => {
  receiver = await startWebhookReceiver('/api');
});
afterEach(async () => {
  await receiver.close();
});

const post = (timeoutMs = 5_000) =>
  sendHttp(
    { method: 'POST', url: receiver.url, headers: { 'content-type': 'application/json' }, body: '{"a":1}' },
    { dispatcher: guardedDispatcher(), timeoutMs, receiver: 'the receiver' },
  );

describe('sendHttp', () => {
  it('sends the request as given, with the notifier user agent', async () => {
    await post();
    const hook = await receiver.hooks.next();
    expect(hook).toMatchObject({ method: 'POST', url: '/api', body: '{"a":1}' });
    expect(hook.headers['user-agent']).toBe('outpost-notifier');
    expect(hook.headers['content-type']).toBe('application/json');
  });

  it.each([200, 202, 204])('HTTP %i is success, with the trimmed answer as detail', async (status) => {
    receiver.script.push(status === 204 ? 204 : { status, body: '  {"status":"success"}\n' });
    expect(await post()).toEqual(status === 204 ? { ok: true } : { ok: true, detail: '{"status":"success"}' });
  });

  it.each([301, 307, 400, 401, 403, 404, 410, 422])(
    'HTTP %i is a permanent failure (redirects are not followed), keeping what the receiver said',
    async (status) => {
      receiver.script.push({ status, body: 'invalid_payload' });
      expect(await post()).toEqual({
        ok: false,
        permanent: true,
        error: `the receiver answered HTTP ${status}`,
        detail: 'invalid_payload',
      });
    },
  );

  it.each([408, 425, 429, 500, 502, 503])('HTTP %i is worth another attempt', async (status) => {
    receiver.script.push(status);
    expect(await post()).toEqual({ ok: false, permanent: false, error: `the receiver answered HTTP ${status}` });
  });

  it('keeps at most 500 characters of a long answer', async () => {
    receiver.script.push({ status: 400, body: 'x'.repeat(100_000) });
    const outcome = await post();
    expect(outcome.detail).toBe(`${'x'.repeat(500)}…`);
  });

  it('a receiver that does not answer within the timeout is worth another attempt', async () => {
    receiver.script.push('hang');
    const outcome = await post(300);
    expect(outcome).toMatchObject({
      ok: false,
      permanent: false,
      error: expect.stringMatching(/^the request to the receiver failed: /),
    });
    expect(receiver.hooks.items).toHaveLength(1);
  });

  it('a receiver that is not listening is worth another attempt', async () => {
    await receiver.close();
    const outcome = await post();
    expect(outcome).toMatchObject({ ok: false, permanent: false, error: expect.stringContaining('ECONNREFUSED') });
  });
});
