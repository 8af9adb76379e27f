/**
 * OPSGENIE channels: the Opsgenie Alert API in the channel's region. A failure, degradation,
 * reminder or SSL warning creates an alert whose alias is the alert's incident key (Opsgenie folds
 * a second create with an open alias into the first); a recovery closes the alert by that alias.
 * Opsgenie answers 202 when it accepted the request.
 */
import { alertDetails, alertKind, alertTitle, incidentKeyOf } from './alert-text.ts';
import { postJson } from './http.ts';
import type { AlertMessage, ChannelSender } from './types.ts';

type OpsgenieConfig = Parameters<ChannelSender<'OPSGENIE'>>[1]['config'];

/** Opsgenie's limits: a message of 130 characters, a description of 15,000, 20 tags of 50. */
const MESSAGE_MAX = 130;
const DESCRIPTION_MAX = 15_000;
const TAGS_MAX = 20;
const TAG_MAX = 50;
const clip = (text: string, max: number) => (text.length > max ? `${text.slice(0, max - 1)}…` : text);

/** Where to POST and what: a create to /v2/alerts, or a close of the alert with this alias. */
export function opsgenieRequest(
  m: AlertMessage,
  config: OpsgenieConfig,
  apiUrl: string,
): { url: string; payload: unknown } {
  const alias = incidentKeyOf(m);
  const alerts = `${apiUrl.replace(/\/+$/, '')}/v2/alerts`;
  if (alertKind(m.alertType) === 'recovery') {
    const url = `${alerts}/${encodeURIComponent(alias)}/close?identifierType=alias`;
    return { url, payload: { source: 'Outpost', note: `${alertTitle(m)}: ${m.resultUrl}` } };
  }
  const description = [
    m.error,
    `Location: ${m.runLocation}`,
    `Response time: ${m.responseTime} ms`,
    `Started at: ${m.startedAt}`,
    m.resultUrl,
  ];
  const payload = {
    message: clip(alertTitle(m), MESSAGE_MAX),
    alias,
    description: clip(description.filter(Boolean).join('\n'), DESCRIPTION_MAX),
    priority: config.priority,
    tags: m.tags.slice(0, TAGS_MAX).map((t) => clip(t, TAG_MAX)),
    details: alertDetails(m),
    entity: m.checkName,
    source: 'Outpost',
  };
  return { url: alerts, payload };
}

export const sendOpsgenieAlert: ChannelSender<'OPSGENIE'> = (m, channel, ctx) => {
  const { url, payload } = opsgenieRequest(m, channel.config, ctx.providers.opsgenieApiUrl[channel.config.region]);
  return postJson(url, payload, ctx, 'Opsgenie', { authorization: `GenieKey ${channel.config.apiKey}` });
};
