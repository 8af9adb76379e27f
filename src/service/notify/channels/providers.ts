/**
 * Where the alert providers are (README "Service" table lists each variable): the vendors' public
 * endpoints by default, each replaceable so tests and air-gapped installations use local receivers.
 * A malformed URL stops the start with a ConfigError naming the variable.
 */
import { type Env, readUrl } from '../../../shared/env.ts';
import { loadAlertGatewayConfig } from '../../alert-channels/gateways.ts';
import type { ProviderEndpoints } from './types.ts';

export const PROVIDER_DEFAULTS = {
  ALERT_PAGERDUTY_EVENTS_URL: 'https://events.pagerduty.com/v2/enqueue',
  ALERT_OPSGENIE_US_URL: 'https://api.opsgenie.com',
  ALERT_OPSGENIE_EU_URL: 'https://api.eu.opsgenie.com',
} as const;

const read = (env: Env, name: keyof typeof PROVIDER_DEFAULTS) => readUrl(env, name, PROVIDER_DEFAULTS[name]).href;

export function loadProviderEndpoints(env: Env): ProviderEndpoints {
  const gateways = loadAlertGatewayConfig(env);
  return {
    pagerDutyEventsUrl: read(env, 'ALERT_PAGERDUTY_EVENTS_URL'),
    opsgenieApiUrl: { US: read(env, 'ALERT_OPSGENIE_US_URL'), EU: read(env, 'ALERT_OPSGENIE_EU_URL') },
    ...(gateways.sms ? { smsGatewayUrl: gateways.sms } : {}),
    ...(gateways.voice ? { voiceGatewayUrl: gateways.voice } : {}),
  };
}
