/**
 * The operator's SMS and voice gateways. SMS and CALL channels deliver through them, so the API
 * accepts those channel types only when the matching gateway is configured; a malformed URL stops
 * the start with a ConfigError naming the variable.
 */
import { type Env, readOptionalString, readUrl } from '../../shared/env.ts';

export interface AlertGatewayConfig {
  /** ALERT_SMS_GATEWAY_URL: where SMS alerts are posted; absent means SMS channels are refused. */
  sms?: URL;
  /** ALERT_VOICE_GATEWAY_URL: where phone-call alerts are posted; absent means CALL channels are refused. */
  voice?: URL;
}

export const SMS_GATEWAY_SETTING = 'ALERT_SMS_GATEWAY_URL';
export const VOICE_GATEWAY_SETTING = 'ALERT_VOICE_GATEWAY_URL';

function optionalUrl(env: Env, name: string): URL | undefined {
  const value = readOptionalString(env, name);
  return value === undefined ? undefined : readUrl(env, name, value);
}

export function loadAlertGatewayConfig(env: Env): AlertGatewayConfig {
  return { sms: optionalUrl(env, SMS_GATEWAY_SETTING), voice: optionalUrl(env, VOICE_GATEWAY_SETTING) };
}
