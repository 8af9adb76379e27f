/**
 * Sentry envelopes, as the Sentry SDKs post them: newline-delimited, an envelope header line, then
 * item header + payload pairs. An item header may give the payload's `length` in bytes (payloads
 * may then contain newlines or be binary); without it the payload runs to the next newline. Parsing
 * works on bytes, not strings, because `length` counts bytes.
 * https://develop.sentry.dev/sdk/envelopes/
 */
import { gunzipSync, inflateSync } from 'node:zlib';

export interface EnvelopeItem {
  header: Record<string, unknown>;
  payload: Buffer;
}

export interface Envelope {
  header: Record<string, unknown>;
  items: EnvelopeItem[];
}

export class EnvelopeError extends Error {
  override readonly name = 'EnvelopeError';
}

const NEWLINE = 0x0a;
/** A small compressed body must not inflate into gigabytes. */
const MAX_DECODED_BYTES = 10 * 1024 * 1024;

function readLine(buf: Buffer, start: number): { line: Buffer; next: number } {
  const end = buf.indexOf(NEWLINE, start);
  return end === -1
    ? { line: buf.subarray(start), next: buf.length }
    : { line: buf.subarray(start, end), next: end + 1 };
}

function parseJsonObject(bytes: Buffer, what: string): Record<string, unknown> {
  let value: unknown;
  try {
    value = JSON.parse(bytes.toString('utf8'));
  } catch {
    throw new EnvelopeError(`${what} is not JSON`);
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value))
    throw new EnvelopeError(`${what} is not a JSON object`);
  return value as Record<string, unknown>;
}

/** Undoes the transport's compression (the Node SDK gzips bodies over 32 KiB). */
export function decodeBody(body: Buffer, contentEncoding: string | undefined): Buffer {
  const encoding = contentEncoding?.trim().toLowerCase();
  try {
    if (encoding === 'gzip' || encoding === 'x-gzip') return gunzipSync(body, { maxOutputLength: MAX_DECODED_BYTES });
    if (encoding === 'deflate') return inflateSync(body, { maxOutputLength: MAX_DECODED_BYTES });
  } catch {
    throw new EnvelopeError(`the body is not valid ${encoding} data`);
  }
  if (encoding && encoding !== 'identity') throw new EnvelopeError(`content-encoding ${encoding} is not supported`);
  return body;
}

export function parseEnvelope(buf: Buffer): Envelope {
  const first = readLine(buf, 0);
  if (first.line.length === 0) throw new EnvelopeError('the envelope is empty');
  const header = parseJsonObject(first.line, 'the envelope header');
  const items: EnvelopeItem[] = [];
  let pos = first.next;
  while (pos < buf.length) {
    const headerLine = readLine(buf, pos);
    pos = headerLine.next;
    // Blank lines between items (a trailing newline, mostly) carry nothing.
    if (headerLine.line.length === 0) continue;
    const itemHeader = parseJsonObject(headerLine.line, `item header ${items.length + 1}`);
    let payload: Buffer;
    if (typeof itemHeader.length === 'number') {
      const length = itemHeader.length;
      if (!Number.isInteger(length) || length < 0 || pos + length > buf.length) {
        throw new EnvelopeError(`item ${items.length + 1} claims ${length} bytes but the envelope is shorter`);
      }
      payload = buf.subarray(pos, pos + length);
      pos += length;
      // The newline after a length-delimited payload is optional.
      if (buf[pos] === NEWLINE) pos += 1;
    } else {
      const line = readLine(buf, pos);
      payload = line.line;
      pos = line.next;
    }
    items.push({ header: itemHeader, payload });
  }
  return { header, items };
}

/** The `event` items of an envelope as objects; other item types (sessions, client reports) are skipped. */
export function eventsOf(envelope: Envelope): Record<string, unknown>[] {
  return envelope.items
    .filter((item) => item.header.type === 'event')
    .map((item, i) => parseJsonObject(item.payload, `event ${i + 1}`));
}

/** The public key of a Sentry request: `sentry_key` in the query string or in `X-Sentry-Auth`. */
export function sentryKeyOf(query: unknown, authHeader: string | string[] | undefined): string | undefined {
  const fromQuery = (query as Record<string, unknown> | undefined)?.sentry_key;
  if (typeof fromQuery === 'string' && fromQuery !== '') return fromQuery;
  const header = Array.isArray(authHeader) ? authHeader[0] : authHeader;
  const match = header ? /(?:^|[\s,])sentry_key\s*=\s*([^,\s]+)/i.exec(header) : null;
  return match?.[1];
}
