/**
 * Reading a message an SMTP sink received, as a mail client would: headers unfolded, and the text
 * part's quoted-printable encoding undone (nodemailer wraps long lines that way).
 */
import type { ReceivedMail } from './notify-receivers.ts';

export function mailHeader(mail: ReceivedMail, name: string): string | undefined {
  const head = mail.raw.split(/\r?\n\r?\n/)[0]?.replace(/\r?\n[ \t]+/g, ' ') ?? '';
  const line = head.split(/\r?\n/).find((l) => l.toLowerCase().startsWith(`${name.toLowerCase()}:`));
  return line?.slice(name.length + 1).trim();
}

export function mailText(mail: ReceivedMail): string {
  const body = mail.raw
    .split(/\r?\n\r?\n/)
    .slice(1)
    .join('\n\n');
  const quotedPrintable = /content-transfer-encoding: quoted-printable/i.test(mail.raw);
  if (!quotedPrintable) return body;
  const bytes = body
    .replace(/=\r?\n/g, '')
    .replace(/=([0-9A-F]{2})/g, (_m, hex: string) => String.fromCharCode(Number.parseInt(hex, 16)));
  return Buffer.from(bytes, 'latin1').toString('utf8');
}

/** The first URL in the text that starts with `prefix`. */
export function linkIn(text: string, prefix: string): string | undefined {
  const at = text.indexOf(prefix);
  return at === -1 ? undefined : /^\S+/.exec(text.slice(at))?.[0];
}
