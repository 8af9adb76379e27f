/**
 * Sending one email over SMTP with nodemailer: the one place that knows SMTP's timeouts and which
 * answers are final. Subscriber emails (../email.ts) and EMAIL alert channels (./email.ts) both
 * send through it.
 */
import nodemailer from 'nodemailer';
import type { MailTransport, SendOutcome } from './types.ts';

type Mail = Parameters<MailTransport['send']>[0];

/** A MailTransport that also sends text-only mail (subscriber notifications have no HTML part). */
export interface ClosableMailTransport extends MailTransport {
  send(mail: Omit<Mail, 'html'> & { html?: string }): Promise<SendOutcome>;
  close(): void;
}

export function createMailTransport(opts: { smtpUrl: string; from: string; timeoutMs: number }): ClosableMailTransport {
  const transport = nodemailer.createTransport({
    url: opts.smtpUrl,
    // Timeouts for each SMTP step, so a stalled server cannot hold a delivery past its lease.
    connectionTimeout: opts.timeoutMs,
    greetingTimeout: opts.timeoutMs,
    socketTimeout: opts.timeoutMs,
  });
  return {
    async send(mail) {
      try {
        const info = await transport.sendMail({ from: opts.from, ...mail });
        return typeof info.response === 'string' ? { ok: true, detail: info.response } : { ok: true };
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
