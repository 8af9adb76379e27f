/**
 * EMAIL channels: one message with a plain-text and an HTML part, through the service's SMTP
 * settings (ctx.mail). Everything user-controlled is HTML-escaped in the HTML part. The Message-ID
 * comes from the notification id, so a re-sent message folds into the first in mail clients.
 */
import Handlebars from 'handlebars';
import { messageIdFor } from '../email.ts';
import { DELIVERY_HEADER } from '../webhook.ts';
import { alertFacts, alertFactsText, alertKind, alertTitle } from './alert-text.ts';
import type { AlertMessage, ChannelSender } from './types.ts';

const escapeHtml = Handlebars.Utils.escapeExpression;

const HEADLINE_COLOURS = { failure: '#b00020', degraded: '#a15c00', recovery: '#1b7f3b', ssl: '#a15c00' } as const;

export function alertEmailSubject(m: AlertMessage): string {
  return `[Outpost] ${alertTitle(m)}`;
}

export function alertEmailText(m: AlertMessage): string {
  return `${alertTitle(m)}\n\n${alertFactsText(m)}\n`;
}

export function alertEmailHtml(m: AlertMessage): string {
  const rows = alertFacts(m)
    .filter((f) => f.label !== 'Result')
    .map(
      (f) =>
        `<tr><th align="left" style="padding:2px 12px 2px 0">${escapeHtml(f.label)}</th><td>${escapeHtml(f.value)}</td></tr>`,
    )
    .join('');
  const colour = HEADLINE_COLOURS[alertKind(m.alertType)];
  return [
    '<!doctype html><html><body style="font-family:sans-serif">',
    `<h2 style="color:${colour}">${escapeHtml(alertTitle(m))}</h2>`,
    `<table>${rows}</table>`,
    `<p><a href="${escapeHtml(m.resultUrl)}">Open the check result</a></p>`,
    '</body></html>',
  ].join('\n');
}

export const sendEmailAlert: ChannelSender<'EMAIL'> = async (m, channel, ctx) => {
  if (!ctx.mail) return { ok: false, permanent: true, error: 'SMTP_URL is not set, so the service cannot send email' };
  return ctx.mail.send({
    to: channel.config.address,
    subject: alertEmailSubject(m),
    text: alertEmailText(m),
    html: alertEmailHtml(m),
    messageId: messageIdFor(m.notificationId, new URL(m.resultUrl).hostname),
    headers: { [DELIVERY_HEADER]: m.notificationId },
  });
};
