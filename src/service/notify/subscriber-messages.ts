/**
 * What each subscriber message says, by kind (an incident update, or a confirmation request), as an
 * email and as a webhook body. Every email carries its subscription's unsubscribe link in the text
 * and as RFC 8058 one-click headers (List-Unsubscribe + List-Unsubscribe-Post), so mail clients can
 * offer an unsubscribe button that works without opening a page.
 */
import type { ConfirmationRequest, OutboxEntry } from '../store/status-pages-types.ts';
import type { SubscriptionLinks } from '../subscriptions/links.ts';
import { notificationSubject, notificationText } from './delivery.ts';

export interface SubscriberEmail {
  subject: string;
  text: string;
  headers: Record<string, string>;
}

export function subscriberEmail(entry: OutboxEntry, links: SubscriptionLinks): SubscriberEmail {
  const unsubscribeUrl = entry.unsubscribeToken ? links.unsubscribe(entry.unsubscribeToken) : null;
  const headers: Record<string, string> = unsubscribeUrl
    ? { 'List-Unsubscribe': `<${unsubscribeUrl}>`, 'List-Unsubscribe-Post': 'List-Unsubscribe=One-Click' }
    : {};
  if (entry.kind === 'confirmation') {
    return {
      subject: `Confirm your subscription to ${entry.payload.statusPage.name}`,
      text: confirmationText(
        entry.payload,
        entry.confirmToken ? links.confirm(entry.confirmToken) : null,
        unsubscribeUrl,
      ),
      headers,
    };
  }
  const footer = unsubscribeUrl
    ? [
        '',
        '--',
        'You get this email because you subscribed to these status page updates.',
        `Unsubscribe: ${unsubscribeUrl}`,
      ]
    : [];
  return {
    subject: notificationSubject(entry.payload),
    text: [notificationText(entry.payload), ...footer].join('\n'),
    headers,
  };
}

function confirmationText(
  request: ConfirmationRequest,
  confirmUrl: string | null,
  unsubscribeUrl: string | null,
): string {
  return [
    `Someone (hopefully you) asked to get updates of the status page "${request.statusPage.name}" at this address.`,
    '',
    'To confirm, open this link and press "Confirm subscription":',
    confirmUrl ?? '(this confirmation has no link: subscribe again from the status page)',
    '',
    `The link works until ${request.expiresAt}. If you did not ask for this, ignore this email: nothing is sent to you unless you confirm.`,
    ...(unsubscribeUrl ? ['', `To remove your address now: ${unsubscribeUrl}`] : []),
  ].join('\n');
}

/** The webhook body: the frozen message, its idempotency key, and its links. */
export function subscriberWebhookBody(entry: OutboxEntry, links: SubscriptionLinks): string {
  const unsubscribeUrl = entry.unsubscribeToken ? links.unsubscribe(entry.unsubscribeToken) : undefined;
  if (entry.kind === 'confirmation') {
    const confirmUrl = entry.confirmToken ? links.confirm(entry.confirmToken) : undefined;
    return JSON.stringify({
      id: entry.id,
      type: 'subscription.confirmation',
      createdAt: entry.createdAt,
      ...entry.payload,
      confirmUrl,
      unsubscribeUrl,
    });
  }
  return JSON.stringify({
    id: entry.id,
    type: 'incident.update',
    createdAt: entry.createdAt,
    ...entry.payload,
    unsubscribeUrl,
  });
}
