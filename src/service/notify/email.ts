/**
 * Email delivery over SMTP with nodemailer. The Message-ID is derived from the delivery id, so a
 * message re-sent after a crash carries the same Message-ID and mail clients can fold duplicates.
 */
import nodemailer from 'nodemailer';
import type { OutboxEntry } from '../store/status-pages-types.ts';
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
  const transport = nodemailer.createTransport({
    url: opts.smtpUrl,
    // Timeouts for each SMTP step, so a stalled server cannot hold a delivery past its lease.
    connectionTimeout: opts.timeoutMs,
    greetingTimeout: opts.timeoutMs,
    socketTimeout: opts.timeoutMs,
  });
  return {
    async send(entry) {
      try {
        await transport.sendMail({
          from: opts.from,
          to: entry.address,
          subject: notificationSubject(entry.payload),
          text: notificationText(entry.payload),
          messageId: messageIdFor(entry.id, opts.domain),
          headers: { [DELIVERY_HEADER]: entry.id },
        });
        return { ok: true };
      } catch (err) {
        const e = err as Error & { responseCode?: number; code?: string };
        // A 5xx answer is the server's final word on this message (e.g. no such mailbox); 4xx and
        // connection failures are worth another try.
        const permanent = typeof e.responseCode === 'number' && e.responseCode >= 500;
        return { ok: false, permanent, error: `SMTP: ${e.code ? `${e.code} ` : ''}${e.message}` };
      }
    },
    close() {
      transport.close();
    },
  };
}
