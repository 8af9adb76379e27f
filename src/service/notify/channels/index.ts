/** The sender of each channel type, as the alert pipeline calls them. */
import { sendEmailAlert } from './email.ts';
import { sendOpsgenieAlert } from './opsgenie.ts';
import { sendPagerDutyAlert } from './pagerduty.ts';
import { sendCallAlert, sendSmsAlert } from './phone.ts';
import { sendSlackAlert } from './slack.ts';
import type { ChannelSenders } from './types.ts';
import { sendWebhookAlert } from './webhook.ts';

export function createChannelSenders(): ChannelSenders {
  return {
    EMAIL: sendEmailAlert,
    SLACK: sendSlackAlert,
    WEBHOOK: sendWebhookAlert,
    SMS: sendSmsAlert,
    PAGERDUTY: sendPagerDutyAlert,
    OPSGENIE: sendOpsgenieAlert,
    CALL: sendCallAlert,
  };
}
