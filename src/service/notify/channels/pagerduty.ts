/**
 * PAGERDUTY channels: PagerDuty Events API v2. A failure, degradation, reminder or SSL warning is a
 * `trigger`, a recovery a `resolve`, both with the alert's incident key as `dedup_key`, so a
 * recovery resolves what its failure opened and a re-sent trigger opens no second incident.
 * PagerDuty answers 202 when it accepted the event, 400 for an invalid one, 429 when rate limited.
 */
import { type AlertKind, alertDetails, alertKind, alertTitle, incidentKeyOf } from './alert-text.ts';
import { postJson } from './http.ts';
import type { AlertMessage, ChannelSender } from './types.ts';

const SEVERITY: Record<Exclude<AlertKind, 'recovery'>, string> = {
  failure: 'critical',
  degraded: 'warning',
  ssl: 'warning',
};
/** PagerDuty refuses a summary over 1024 characters. */
const SUMMARY_MAX = 1_024;

export function pagerDutyEvent(m: AlertMessage, routingKey: string): Record<string, unknown> {
  const kind = alertKind(m.alertType);
  const base = { routing_key: routingKey, dedup_key: incidentKeyOf(m), client: 'Outpost', client_url: m.resultUrl };
  if (kind === 'recovery') return { ...base, event_action: 'resolve' };
  const summary = alertTitle(m) + (m.error ? `: ${m.error}` : '');
  return {
    ...base,
    event_action: 'trigger',
    payload: {
      summary: summary.length > SUMMARY_MAX ? `${summary.slice(0, SUMMARY_MAX - 1)}…` : summary,
      source: m.runLocation || 'outpost',
      severity: SEVERITY[kind],
      timestamp: m.createdAt,
      component: m.checkName,
      ...(m.groupName ? { group: m.groupName } : {}),
      class: m.checkType,
      custom_details: alertDetails(m),
    },
    links: [{ href: m.resultUrl, text: 'Check result' }],
  };
}

export const sendPagerDutyAlert: ChannelSender<'PAGERDUTY'> = (m, channel, ctx) =>
  postJson(ctx.providers.pagerDutyEventsUrl, pagerDutyEvent(m, channel.config.serviceKey), ctx, 'PagerDuty');
