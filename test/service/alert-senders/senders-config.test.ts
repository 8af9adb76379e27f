/**
 * Where the senders find the providers (ALERT_* variables), and that every channel type reaches
 * its own sender (a real receiver on 127.0.0.1 stands in for every provider).
 */
import { describe, expect, it, onTestFinished } from 'vitest';
import {
  ALERT_CHANNEL_TYPES,
  type AlertChannelDefinition,
} from '../../../src/service/alert-channels/channel-config.ts';
import { createChannelSenders } from '../../../src/service/notify/channels/index.ts';
import { loadProviderEndpoints } from '../../../src/service/notify/channels/providers.ts';
import type { ChannelSender } from '../../../src/service/notify/channels/types.ts';
import { ConfigError } from '../../../src/shared/errors.ts';
import { startWebhookReceiver } from '../../helpers/notify-receivers.ts';
import { alertMessage, channel, sendContext } from './fixtures.ts';

describe('loadProviderEndpoints', () => {
  it("defaults to the providers' public endpoints and no gateways", () => {
    expect(loadProviderEndpoints({})).toEqual({
      pagerDutyEventsUrl: 'https://events.pagerduty.com/v2/enqueue',
      opsgenieApiUrl: { US: 'https://api.opsgenie.com/', EU: 'https://api.eu.opsgenie.com/' },
    });
  });

  it('takes each endpoint and both gateways from the environment', () => {
    const endpoints = loadProviderEndpoints({
      ALERT_PAGERDUTY_EVENTS_URL: 'http://127.0.0.1:8081/v2/enqueue',
      ALERT_OPSGENIE_US_URL: 'http://127.0.0.1:8082',
      ALERT_OPSGENIE_EU_URL: 'http://127.0.0.1:8083/eu',
      ALERT_SMS_GATEWAY_URL: 'http://127.0.0.1:8084/sms',
      ALERT_VOICE_GATEWAY_URL: 'http://127.0.0.1:8085/voice',
    });
    expect(endpoints).toEqual({
      pagerDutyEventsUrl: 'http://127.0.0.1:8081/v2/enqueue',
      opsgenieApiUrl: { US: 'http://127.0.0.1:8082/', EU: 'http://127.0.0.1:8083/eu' },
      smsGatewayUrl: new URL('http://127.0.0.1:8084/sms'),
      voiceGatewayUrl: new URL('http://127.0.0.1:8085/voice'),
    });
  });

  it.each([
    ['ALERT_PAGERDUTY_EVENTS_URL', 'events.pagerduty.com/v2/enqueue', /is not a URL/],
    ['ALERT_OPSGENIE_US_URL', 'ftp://api.opsgenie.com', /must start with http:\/\/ or https:\/\//],
    ['ALERT_OPSGENIE_EU_URL', '::', /is not a URL/],
    ['ALERT_SMS_GATEWAY_URL', 'gateway', /is not a URL/],
    ['ALERT_VOICE_GATEWAY_URL', 'mailto:x@y', /must start with http:\/\/ or https:\/\//],
  ])('a malformed %s is a ConfigError naming it', (name, value, message) => {
    let error: unknown;
    try {
      loadProviderEndpoints({ [name]: value });
    } catch (err) {
      error = err;
    }
    expect(error).toBeInstanceOf(ConfigError);
    expect((error as ConfigError).setting).toBe(name);
    expect((error as Error).message).toMatch(new RegExp(`^${name}=`));
    expect((error as Error).message).toMatch(message);
  });
});

describe('createChannelSenders', () => {
  it('sends each channel type the way that type is sent', async () => {
    const receiver = await startWebhookReceiver('/');
    onTestFinished(() => receiver.close());
    const at = (path: string) => `${receiver.url.replace(/\/$/, '')}${path}`;
    const ctx = sendContext({
      providers: {
        pagerDutyEventsUrl: at('/pagerduty'),
        opsgenieApiUrl: { US: at('/opsgenie-us'), EU: at('/opsgenie-eu') },
        smsGatewayUrl: new URL(at('/sms')),
        voiceGatewayUrl: new URL(at('/voice')),
      },
    });
    const channels: AlertChannelDefinition[] = [
      channel('SLACK', { url: at('/slack') }),
      channel('WEBHOOK', { url: at('/webhook'), method: 'PUT', headers: [], queryParameters: [] }),
      channel('PAGERDUTY', { serviceKey: 'key', account: 'a', serviceName: 's' }),
      channel('OPSGENIE', { apiKey: 'key', region: 'EU', priority: 'P3' }),
      channel('SMS', { number: '+15550100' }),
      channel('CALL', { number: '+15550100' }),
    ];
    const senders = createChannelSenders();
    expect(Object.keys(senders).sort()).toEqual([...ALERT_CHANNEL_TYPES].sort());
    for (const ch of channels) {
      const send = senders[ch.type] as ChannelSender;
      expect(await send(alertMessage(), ch, ctx)).toEqual({ ok: true });
    }
    expect(receiver.hooks.items.map((h) => `${h.method} ${h.url}`)).toEqual([
      'POST /slack',
      'PUT /webhook',
      'POST /pagerduty',
      'POST /opsgenie-eu/v2/alerts',
      'POST /sms',
      'POST /voice',
    ]);
    expect(await senders.EMAIL(alertMessage(), channel('EMAIL', { address: 'a@example.com' }), ctx)).toMatchObject({
      ok: false,
      error: expect.stringMatching(/^SMTP_URL is not set/),
    });
  });
});
