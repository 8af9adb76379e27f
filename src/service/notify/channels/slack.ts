/**
 * SLACK channels: a message in Slack's incoming-webhook format, posted to the channel's webhook URL.
 * The title links to the result; the facts are block-kit fields inside an attachment, whose colour
 * says what kind of alert it is. `config.channel` overrides the webhook's default channel.
 */
import { type AlertKind, alertFacts, alertKind, alertTitle } from './alert-text.ts';
import { postJson } from './http.ts';
import type { AlertMessage, ChannelSender } from './types.ts';

export const SLACK_COLOURS: Record<AlertKind, string> = {
  failure: '#D0021B',
  degraded: '#F5A623',
  recovery: '#2EB67D',
  ssl: '#F5A623',
};

/** Slack reads &, < and > as markup in mrkdwn text; everything else is literal. */
export function slackEscape(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
}

/** Slack refuses a field over 2000 characters; a long error is cut well before. */
const FIELD_MAX = 1_500;
const clip = (text: string) => (text.length > FIELD_MAX ? `${text.slice(0, FIELD_MAX)}…` : text);

export function slackPayload(m: AlertMessage, channel?: string): Record<string, unknown> {
  const title = alertTitle(m);
  // A section holds at most 10 fields; the result link is the title's, so it is not repeated.
  const fields = alertFacts(m)
    .filter((f) => f.label !== 'Result')
    .slice(0, 10)
    .map((f) => ({ type: 'mrkdwn', text: `*${f.label}*\n${slackEscape(clip(f.value))}` }));
  const blocks = [
    { type: 'section', text: { type: 'mrkdwn', text: `*<${m.resultUrl}|${slackEscape(title)}>*` } },
    { type: 'section', fields },
  ];
  const payload: Record<string, unknown> = {
    text: title,
    attachments: [{ color: SLACK_COLOURS[alertKind(m.alertType)], fallback: `${title}: ${m.resultUrl}`, blocks }],
  };
  if (channel) payload.channel = channel;
  return payload;
}

export const sendSlackAlert: ChannelSender<'SLACK'> = (m, channel, ctx) =>
  postJson(channel.config.url, slackPayload(m, channel.config.channel), ctx, 'Slack');
