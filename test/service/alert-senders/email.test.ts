/**
 * EMAIL alert channels through a real SMTP server on 127.0.0.1 (smtp-server): one message with a
 * plain-text and an HTML part, user-controlled text escaped in the HTML, the Message-ID from the
 * notification id, and what a refused mailbox or a missing SMTP_URL comes to.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { sendEmailAlert } from '../../../src/service/notify/channels/email.ts';
import {
  type ClosableMailTransport,
  createMailTransport,
} from '../../../src/service/notify/channels/mail-transport.ts';
import { type SmtpSink, startSmtpSink } from '../../helpers/notify-receivers.ts';
import { alertMessage, channel, sendContext } from './fixtures.ts';

let sink: SmtpSink;
let mail: ClosableMailTransport;
beforeEach(async () => {
  sink = await startSmtpSink({
    rejectRecipient: (a) => (a.startsWith('gone@') ? 550 : a.startsWith('busy@') ? 450 : undefined),
  });
  mail = createMailTransport({ smtpUrl: sink.url, from: 'Outpost alerts <alerts@outpost.example>', timeoutMs: 5_000 });
});
afterEach(async () => {
  mail.close();
  await sink.close();
});

/** A MIME part's content type and its decoded text (7bit, quoted-printable or base64). */
function mimeParts(raw: string): Map<string, string> {
  const boundary = /boundary="?([^";\r\n]+)"?/.exec(raw)?.[1];
  if (!boundary) throw new Error(`no multipart boundary in:\n${raw}`);
  const parts = new Map<string, string>();
  for (const part of raw.split(`--${boundary}`).slice(1, -1)) {
    const [head = '', ...body] = part.replace(/^\r\n/, '').split('\r\n\r\n');
    const type = /^Content-Type: ([^;\r\n]+)/im.exec(head)?.[1] ?? '';
    const encoding = /^Content-Transfer-Encoding: (\S+)/im.exec(head)?.[1]?.toLowerCase();
    const text = body.join('\r\n\r\n').replace(/\r\n$/, '');
    parts.set(type, decode(text, encoding));
  }
  return parts;
}

function decode(text: string, encoding: string | undefined): string {
  if (encoding === 'base64') return Buffer.from(text, 'base64').toString('utf8');
  if (encoding !== 'quoted-printable') return text;
  const bytes = text.replace(/=\r\n/g, '').replace(/=([0-9A-F]{2})/g, (_m, hex: string) => `%${hex}`);
  return decodeURIComponent(bytes.replace(/%(?![0-9A-F]{2})/g, '%25'));
}

/** The Subject header, unfolded, its RFC 2047 encoded words (=?UTF-8?Q?…?=) decoded. */
function subjectOf(raw: string): string {
  const folded = /^Subject: (.*(?:\r\n[ \t].*)*)/m.exec(raw)?.[1] ?? '';
  const joined = folded.replace(/\?=\r\n[ \t]=\?/g, '?==?').replace(/\r\n[ \t]/g, ' ');
  return joined.replace(/=\?UTF-8\?Q\?(.*?)\?=/gi, (_m, q: string) => decode(q.replace(/_/g, ' '), 'quoted-printable'));
}

const email = (address = 'oncall@example.com') => channel('EMAIL', { address });

describe('EMAIL', () => {
  it('sends one message with a text and an HTML part carrying the check, alert, location, error, time and link', async () => {
    const m = alertMessage({ checkName: 'Checkout <script>alert(1)</script> & co', error: 'expected "200" <got> 500' });
    expect(await sendEmailAlert(m, email(), sendContext({ mail }))).toMatchObject({
      ok: true,
      detail: expect.stringMatching(/^250/),
    });
    const received = await sink.mails.next();
    expect(received.to).toEqual(['oncall@example.com']);
    expect(received.from).toBe('alerts@outpost.example');
    expect(subjectOf(received.raw)).toBe('[Outpost] Check "Checkout <script>alert(1)</script> & co" has failed');
    expect(received.raw).toMatch(new RegExp(`^Message-ID: <${m.notificationId}@outpost\\.example>`, 'im'));
    expect(received.raw).toMatch(new RegExp(`^X-Outpost-Delivery: ${m.notificationId}`, 'im'));
    const parts = mimeParts(received.raw);
    expect([...parts.keys()]).toEqual(['text/plain', 'text/html']);

    const text = parts.get('text/plain') ?? '';
    for (const line of [
      'Check "Checkout <script>alert(1)</script> & co" has failed',
      'Check: Checkout <script>alert(1)</script> & co (API)',
      'Alert: ALERT_FAILURE',
      'Location: eu-west-1',
      'Error: expected "200" <got> 500',
      'Response time: 1234 ms',
      `Started at: ${m.startedAt}`,
      `Result: ${m.resultUrl}`,
    ]) {
      expect(text.split(/\r?\n/)).toContain(line);
    }

    const html = parts.get('text/html') ?? '';
    expect(html).not.toContain('<script>');
    expect(html).toContain('Check &quot;Checkout &lt;script&gt;alert(1)&lt;/script&gt; &amp; co&quot; has failed');
    expect(html).toContain('<td>expected &quot;200&quot; &lt;got&gt; 500</td>');
    expect(html).toContain('<td>eu-west-1</td>');
    expect(html).toContain('<td>1234 ms</td>');
    expect(html).toContain(`<td>${m.startedAt}</td>`);
    expect(html).toContain(`<a href="${m.resultUrl}">Open the check result</a>`);
  });

  it('a mailbox the server refuses with 550 is a permanent failure; 450 is retried', async () => {
    expect(await sendEmailAlert(alertMessage(), email('gone@example.com'), sendContext({ mail }))).toMatchObject({
      ok: false,
      permanent: true,
      error: expect.stringContaining('mailbox gone@example.com refused'),
    });
    expect(await sendEmailAlert(alertMessage(), email('busy@example.com'), sendContext({ mail }))).toMatchObject({
      ok: false,
      permanent: false,
    });
    expect(sink.mails.items).toHaveLength(0);
  });

  it('without SMTP settings the notification fails permanently, saying SMTP_URL is not set', async () => {
    expect(await sendEmailAlert(alertMessage(), email(), sendContext({ mail: null }))).toEqual({
      ok: false,
      permanent: true,
      error: 'SMTP_URL is not set, so the service cannot send email',
    });
  });

  it('an SMTP server that is not listening is retried', async () => {
    await sink.close();
    const outcome = await sendEmailAlert(alertMessage(), email(), sendContext({ mail }));
    expect(outcome).toMatchObject({ ok: false, permanent: false, error: expect.stringContaining('ECONNREFUSED') });
  });
});
