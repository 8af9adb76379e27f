/**
 * Email delivery over SMTP with nodemailer. The Message-ID is derived from the delivery id, so a
 * message re-sent after a crash carries the same Message-ID and mail clients can fold duplicates.
 */
import type { OutboxEntry } from '../store/status-pages-types.ts';
import type { ClosableMailTransport } from './channels/mail-transport.ts';
import type { SubscriptionLinks } from '../subscriptions/links.ts';
import type { DeliveryOutcome } from './delivery.ts';
import { subscriberEmail } from './subscriber-messages.ts';
import { DELIVERY_HEADER } from './webhook.ts';

export interface EmailSender {
  send(entry: OutboxEntry): Promise<DeliveryOutcome>;
}

export function messageIdFor(deliveryId: string, domain: string): string {
  return `<${deliveryId}@${domain}>`;
}

/** Subscriber emails through `transport`, the service's one SMTP transport (shared with EMAIL alert channels). */
export function createEmailSender(
  transport: Pick<ClosableMailTransport, 'send'>,
  domain: string,
  links: SubscriptionLinks,
): EmailSender {
  return {
    send: (entry) => {
      const { subject, text, headers } = subscriberEmail(entry, links);
      return transport.send({
        to: entry.address,
        subject,
        text,
        messageId: messageIdFor(entry.id, domain),
        headers: { ...headers, [DELIVERY_HEADER]: entry.id },
      });
    },
  };
}
