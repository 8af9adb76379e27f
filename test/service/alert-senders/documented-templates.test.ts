/**
 * The ready-made Microsoft Teams and Discord templates in docs/alerting.md, taken from the page
 * itself and sent through a WEBHOOK channel for every alert type: each renders to the payload shape
 * its receiver expects, whatever the check's name holds.
 */
import { readFileSync } from 'node:fs';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { sendWebhookAlert } from '../../../src/service/notify/channels/webhook.ts';
import type { AlertType } from '../../../src/service/store/check-status-types.ts';
import { startWebhookReceiver, type WebhookReceiver } from '../../helpers/notify-receivers.ts';
import { alertMessage, channel, sendContext } from './fixtures.ts';

const DOC = readFileSync(new URL('../../../docs/alerting.md', import.meta.url), 'utf8');

/** The first ```json block under a heading of docs/alerting.md. */
function documentedTemplate(heading: string): string {
  const section = DOC.split(`#### ${heading}\n`)[1];
  const block = section ? /```json\n([\s\S]*?)\n```/.exec(section)?.[1] : undefined;
  if (!block) throw new Error(`docs/alerting.md has no json block under "#### ${heading}"`);
  return block;
}

const ALERT_COLOURS: [AlertType, string, number][] = [
  ['ALERT_FAILURE', 'Attention', 15158332],
  ['ALERT_FAILURE_REMAIN', 'Attention', 15158332],
  ['ALERT_DEGRADED_FAILURE', 'Attention', 15158332],
  ['ALERT_DEGRADED', 'Warning', 16776960],
  ['ALERT_DEGRADED_REMAIN', 'Warning', 16776960],
  ['ALERT_FAILURE_DEGRADED', 'Warning', 16776960],
  ['ALERT_SSL', 'Warning', 16776960],
  ['ALERT_RECOVERY', 'Good', 3066993],
  ['ALERT_DEGRADED_RECOVERY', 'Good', 3066993],
];

let receiver: WebhookReceiver;
beforeEach(async () => {
  receiver = await startWebhookReceiver('/hook');
});
afterEach(async () => {
  await receiver.close();
});

/** What the tests read of each receiver's payload. */
interface TeamsMessage {
  type: string;
  attachments: {
    contentType: string;
    content: { type: string; body: Record<string, unknown>[]; actions: { url: string }[] };
  }[];
}
interface DiscordMessage {
  embeds: Record<string, unknown>[];
}

async function sendWith<T>(template: string, alertType: AlertType, error: string | null): Promise<T> {
  const m = alertMessage({ alertType, error, checkName: 'Check "quoted" & <b>', sslDaysRemaining: 5 });
  const before = receiver.hooks.items.length;
  const config = { url: receiver.url, method: 'POST' as const, headers: [], queryParameters: [], template };
  expect(await sendWebhookAlert(m, channel('WEBHOOK', config), sendContext())).toEqual({ ok: true });
  return JSON.parse((await receiver.hooks.at(before)).body) as T;
}

describe('documented WEBHOOK templates', () => {
  it.each(ALERT_COLOURS)('Microsoft Teams, %s: an Adaptive Card message coloured %s', async (alertType, colour) => {
    const body = await sendWith<TeamsMessage>(
      documentedTemplate('Microsoft Teams'),
      alertType,
      'expected 200, got "500"',
    );
    expect(body).toMatchObject({
      type: 'message',
      attachments: [{ contentType: 'application/vnd.microsoft.card.adaptive' }],
    });
    const card = body.attachments[0]?.content;
    expect(card?.type).toBe('AdaptiveCard');
    expect(card?.body[0]).toMatchObject({ type: 'TextBlock', color: colour });
    expect(card?.body[0]?.text).toMatch(
      /^(Check "Check "quoted" & <b>"|The SSL certificate of check "Check "quoted" & <b>")/,
    );
    expect(card?.body[1]?.facts).toContainEqual({ title: 'Error', value: 'expected 200, got "500"' });
    expect(card?.actions[0]?.url).toBe(alertMessage().resultUrl);
  });

  it.each(ALERT_COLOURS)(
    'Discord, %s: one embed with integer colour, description only when there is an error',
    async (alertType, _c, colour) => {
      const withError = await sendWith<DiscordMessage>(documentedTemplate('Discord'), alertType, 'timeout');
      const embed = withError.embeds[0];
      expect(embed).toMatchObject({
        url: alertMessage().resultUrl,
        color: colour,
        description: 'timeout',
        timestamp: alertMessage().createdAt,
      });
      expect(embed?.fields).toContainEqual({ name: 'Check', value: 'Check "quoted" & <b>', inline: true });
      const withoutError = await sendWith<DiscordMessage>(documentedTemplate('Discord'), alertType, null);
      expect(withoutError.embeds[0]).not.toHaveProperty('description');
    },
  );
});
