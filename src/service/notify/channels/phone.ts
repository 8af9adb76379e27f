/**
 * SMS and CALL channels: through the operator's gateway (ALERT_SMS_GATEWAY_URL,
 * ALERT_VOICE_GATEWAY_URL), which talks to the phone network. Outpost POSTs one JSON request per
 * notification (format in docs/alerting.md) with `x-outpost-delivery: <notificationId>` so the
 * gateway can drop a repeat; any 2xx answer means the gateway accepted it.
 */
import { SMS_GATEWAY_SETTING, VOICE_GATEWAY_SETTING } from '../../alert-channels/gateways.ts';
import { DELIVERY_HEADER } from '../webhook.ts';
import { alertTitle } from './alert-text.ts';
import { postJson } from './http.ts';
import type { AlertMessage, ChannelSender, SendContext, SendOutcome } from './types.ts';

type PhoneType = 'SMS' | 'CALL';

/** Two SMS segments' worth: enough for the title, the place, the error's start and the link. */
const SMS_MAX = 300;

/** What is said or texted: an SMS carries the result link, a call reads out only the words. */
export function phoneText(m: AlertMessage, type: PhoneType): string {
  const headline = `${alertTitle(m)} (${m.runLocation})`;
  if (type === 'CALL') return `Outpost alert. ${headline}.`;
  const room = SMS_MAX - headline.length - m.resultUrl.length - 4;
  const error = m.error && room > 10 ? `: ${m.error.length > room ? `${m.error.slice(0, room - 1)}…` : m.error}` : '';
  return `${headline}${error}. ${m.resultUrl}`;
}

export interface GatewayRequest {
  type: PhoneType;
  to: string;
  message: string;
  alertType: string;
  checkId: string;
  checkName: string;
  resultUrl: string;
  notificationId: string;
}

export function gatewayRequest(m: AlertMessage, type: PhoneType, to: string): GatewayRequest {
  const { alertType, checkId, checkName, resultUrl, notificationId } = m;
  return { type, to, message: phoneText(m, type), alertType, checkId, checkName, resultUrl, notificationId };
}

function sendThroughGateway(m: AlertMessage, type: PhoneType, to: string, ctx: SendContext): Promise<SendOutcome> {
  const gateway = type === 'SMS' ? ctx.providers.smsGatewayUrl : ctx.providers.voiceGatewayUrl;
  if (!gateway) {
    const setting = type === 'SMS' ? SMS_GATEWAY_SETTING : VOICE_GATEWAY_SETTING;
    return Promise.resolve({
      ok: false,
      permanent: true,
      error: `${setting} is not set, so the service cannot deliver ${type} alerts`,
    });
  }
  const receiver = `the ${type === 'SMS' ? 'SMS' : 'voice'} gateway`;
  return postJson(gateway, gatewayRequest(m, type, to), ctx, receiver, { [DELIVERY_HEADER]: m.notificationId });
}

export const sendSmsAlert: ChannelSender<'SMS'> = (m, channel, ctx) =>
  sendThroughGateway(m, 'SMS', channel.config.number, ctx);
export const sendCallAlert: ChannelSender<'CALL'> = (m, channel, ctx) =>
  sendThroughGateway(m, 'CALL', channel.config.number, ctx);
