/**
 * What the alert delivery worker uses when the service is built without the channel senders, the
 * provider endpoints or a mail transport (ServiceOptions in app.ts): the providers' public URLs and
 * the operator's SMS/voice gateways, no email, and senders that record plainly that this build
 * cannot send to the channel type (a permanent failure shown in GET /v1/alert-notifications).
 */
import { ALERT_CHANNEL_TYPES, type AlertChannelType } from '../alert-channels/channel-config.ts';
import type { AlertGatewayConfig } from '../alert-channels/gateways.ts';
import type { ChannelSender, ChannelSenders, ProviderEndpoints } from './channels/types.ts';

export function publicProviderEndpoints(gateways: AlertGatewayConfig = {}): ProviderEndpoints {
  return {
    pagerDutyEventsUrl: 'https://events.pagerduty.com/v2/enqueue',
    opsgenieApiUrl: { US: 'https://api.opsgenie.com', EU: 'https://api.eu.opsgenie.com' },
    smsGatewayUrl: gateways.sms,
    voiceGatewayUrl: gateways.voice,
  };
}

const unavailable =
  (type: AlertChannelType): ChannelSender =>
  async () => ({ ok: false, permanent: true, error: `this service was built without a ${type} sender` });

export const UNAVAILABLE_SENDERS = Object.fromEntries(ALERT_CHANNEL_TYPES.map((t) => [t, unavailable(t)])) as unknown as ChannelSenders;
