/**
 * Enough of MIME (RFC 2045-2047) to read what the service's mailer sends: header unfolding and
 * encoded words, nested multipart bodies, quoted-printable and base64. No parser is installed
 * (mailparser is not a dependency) and a test must see both the text/plain and the text/html part.
 */

export interface ParsedMail {
  /** Header names lower-cased; a repeated header keeps its first value. */
  headers: Record<string, string>;
  subject: string;
  messageId: string | undefined;
  /** The decoded text/plain part, if any. */
  text: string | undefined;
  /** The decoded text/html part, if any. */
  html: string | undefined;
}

interface Part {
  headers: Record<string, string>;
  body: string;
}

function splitHeaders(raw: string): Part {
  const normalized = raw.replace(/\r\n/g, '\n');
  const end = normalized.indexOf('\n\n');
  const head = end === -1 ? normalized : normalized.slice(0, end);
  const body = end === -1 ? '' : normalized.slice(end + 2);
  const headers: Record<string, string> = {};
  // Folded lines continue the header above them.
  for (const line of head.replace(/\n[ \t]+/g, ' ').split('\n')) {
    const colon = line.indexOf(':');
    if (colon <= 0) continue;
    const name = line.slice(0, colon).trim().toLowerCase();
    headers[name] ??= line.slice(colon + 1).trim();
  }
  return { headers, body };
}

/** Decodes RFC 2047 encoded words (`=?utf-8?Q?…?=`, `=?utf-8?B?…?=`). */
export function decodeWords(value: string): string {
  return value.replace(
    /=\?([^?]+)\?([QqBb])\?([^?]*)\?=(\s+(?==\?))?/g,
    (_m, _charset: string, enc: string, text: string) =>
      enc.toUpperCase() === 'B'
        ? Buffer.from(text, 'base64').toString('utf8')
        : decodeQuotedPrintable(text.replace(/_/g, ' ')),
  );
}

export function decodeQuotedPrintable(text: string): string {
  const bytes: number[] = [];
  const soft = text.replace(/=\r?\n/g, '');
  for (let i = 0; i < soft.length; i++) {
    const hex = soft.slice(i + 1, i + 3);
    if (soft[i] === '=' && /^[0-9A-Fa-f]{2}$/.test(hex)) {
      bytes.push(Number.parseInt(hex, 16));
      i += 2;
    } else bytes.push(...Buffer.from(soft[i] ?? '', 'utf8'));
  }
  return Buffer.from(bytes).toString('utf8');
}

function decodeBody(part: Part): string {
  const encoding = (part.headers['content-transfer-encoding'] ?? '7bit').toLowerCase();
  if (encoding === 'base64') return Buffer.from(part.body.replace(/\s+/g, ''), 'base64').toString('utf8');
  if (encoding === 'quoted-printable') return decodeQuotedPrintable(part.body);
  return part.body;
}

/** The leaf parts of a message, multipart containers opened recursively. */
function leaves(part: Part): Part[] {
  const type = part.headers['content-type'] ?? 'text/plain';
  const boundary = /boundary="?([^";]+)"?/i.exec(type)?.[1];
  if (!/^multipart\//i.test(type) || !boundary) return [part];
  const sections = part.body.split(`--${boundary}`).slice(1);
  return sections.filter((s) => !s.startsWith('--')).flatMap((s) => leaves(splitHeaders(s.replace(/^\n/, ''))));
}

export function parseMail(raw: string): ParsedMail {
  const top = splitHeaders(raw);
  const parts = leaves(top);
  const ofType = (type: string) => {
    const part = parts.find((p) => (p.headers['content-type'] ?? 'text/plain').toLowerCase().startsWith(type));
    return part ? decodeBody(part).replace(/\n$/, '') : undefined;
  };
  return {
    headers: top.headers,
    subject: decodeWords(top.headers.subject ?? ''),
    messageId: top.headers['message-id'],
    text: ofType('text/plain'),
    html: ofType('text/html'),
  };
}
