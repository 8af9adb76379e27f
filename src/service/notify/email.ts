/**
 * Email delivery over SMTP with nodemailer. The Message-ID is derived from the delivery id, so a
 * message re-sent after a crash carries the same Message-ID and mail clients can fold duplicates.
 */
import type { OutboxEntry } from '../store/status-pages-types.ts';
import { createMailTransport } from './channels/mail-transport.ts';
import { type DeliveryOutcome, notificationSubject, notificationText } from './delivery.ts';
import { DELIVERY_HEADER } from './webhook.ts';

export interface EmailSender {
  send(entry: OutboxEntry): Promise<DeliveryOutcome>;
  close(): void;
}

export function messageIdFor(deliveryId: string, domain: string): string {
  return `<${deliveryId}@${domain}>`;
}

export function createEmailSender(opts: { smtpUrl: string; from: string; domain: string; timeoutMs: number }): EmailSender {
  const transport = createMailTransport(opts);
  return {
    send: (entry) =>
      transport.send({
        to: entry.address,
        subject: notificationSubject(entry.payload),
        text: notificationText(entry.payload),
        messageId: messageIdFor(entry.id, opts.domain),
        headers: { [DELIVERY_HEADER]: entry.id },
      }),
    close: () => transport.close(),
  };
}
