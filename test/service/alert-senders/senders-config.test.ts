/**
 * Where the senders find the providers (ALERT_* variables), and that every channel type has its
 * sender.
 */
import { describe, expect, it } from 'vitest';
import { ALERT_CHANNEL_TYPES } from '../../../src/service/alert-channels/channel-config.ts';
import { sendEmailAlert } from '../../../src/service/notify/channels/email.ts';
import { createChannelSenders } from '../../../src/service/notify/channels/index.ts';
import { sendOpsgenieAlert } from '../../../src/service/notify/channels/opsgenie.ts';
import { sendPagerDutyAlert } from '../../../src/service/notify/channels/pagerduty.ts';
import { sendCallAlert, sendSmsAlert } from '../../../src/service/notify/channels/phone.ts';
import { loadProviderEndpoints } from '../../../src/service/notify/channels/providers.ts';
import { sendSlackAlert } from '../../../src/service/notify/channels/slack.ts';
import { sendWebhookAlert } from '../../../src/service/notify/channels/webhook.ts';
import { ConfigError } from '../../../src/shared/errors.ts';

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
  it('has the sender of every channel type', () => {
    const senders = createChannelSenders();
    expect(Object.keys(senders).sort()).toEqual([...ALERT_CHANNEL_TYPES].sort());
    expect(senders).toEqual({
      EMAIL: sendEmailAlert,
      SLACK: sendSlackAlert,
      WEBHOOK: sendWebhookAlert,
      SMS: sendSmsAlert,
      PAGERDUTY: sendPagerDutyAlert,
      OPSGENIE: sendOpsgenieAlert,
      CALL: sendCallAlert,
    });
  });
});
