/**
 * The subscribe form's input: what it asks for (an email address, or a webhook URL), checked into a
 * subscription or into errors naming the field; and the same-site check every form post passes.
 */
import { randomBytes } from 'node:crypto';
import { isIP } from 'node:net';
import type { FastifyRequest } from 'fastify';
import type { OutboundPolicy } from '../../outbound/policy.ts';
import { blockedKind } from '../../outbound/ranges.ts';
import type { SubscriptionInput } from '../../store/status-pages-types.ts';
import {
  EMAIL_MAX_LENGTH,
  parseEmailAddress,
  parseWebhookUrl,
  WEBHOOK_URL_MAX_LENGTH,
} from '../../subscriptions/addresses.ts';

export type SubscribeField = 'email' | 'url';

export interface SubscribeFormValues {
  channel: 'email' | 'webhook';
  email: string;
  url: string;
}

export type FieldErrors = Partial<Record<SubscribeField | 'channel', string>>;

export type ParsedForm =
  | { ok: true; input: SubscriptionInput }
  | { ok: false; values: SubscribeFormValues; errors: FieldErrors };

const text = (value: unknown): string => (typeof value === 'string' ? value : '');

export function formValues(body: unknown): SubscribeFormValues {
  const fields = (body ?? {}) as Record<string, unknown>;
  return {
    channel: text(fields.channel) === 'webhook' ? 'webhook' : 'email',
    email: text(fields.email).trim(),
    url: text(fields.url).trim(),
  };
}

/** A webhook subscribed from the page gets a secret the service makes (shown once), so nobody has to invent one. */
export function parseSubscribeForm(body: unknown, outbound: OutboundPolicy): ParsedForm {
  const values = formValues(body);
  if (values.channel === 'email') {
    const address = parseEmailAddress(values.email);
    if (address) return { ok: true, input: { type: 'EMAIL', address, secret: null } };
    const error =
      values.email === ''
        ? 'Enter your email address.'
        : `Enter an email address like name@example.com (at most ${EMAIL_MAX_LENGTH} characters).`;
    return { ok: false, values, errors: { email: error } };
  }
  const url = parseWebhookUrl(values.url);
  if (!url) {
    const error =
      values.url === ''
        ? 'Enter the URL of your webhook.'
        : `Enter an http:// or https:// URL (at most ${WEBHOOK_URL_MAX_LENGTH} characters).`;
    return { ok: false, values, errors: { url: error } };
  }
  const refused = refusedAddress(url, outbound);
  if (refused) return { ok: false, values, errors: { url: `This URL cannot receive notifications: ${refused}.` } };
  return { ok: true, input: { type: 'WEBHOOK', address: url.href, secret: randomBytes(24).toString('base64url') } };
}

/**
 * The outbound guard, for a URL that names an address: refused at once, with the reason. A host name
 * is checked when each delivery connects (the address it resolves to then is the one that counts).
 */
function refusedAddress(url: URL, outbound: OutboundPolicy): string | undefined {
  const host = url.hostname.replace(/^\[(.*)\]$/, '$1');
  if (isIP(host) === 0) return undefined;
  // The reason without the refusal's hint about OUTBOUND_ALLOW, which is for operators, not visitors.
  return outbound.refusal(host, host) ? `${host} is ${blockedKind(host)} address` : undefined;
}

/**
 * Whether a form post comes from a page of the same site: its Origin (or, from a browser that sends
 * none, its Referer) names the host the post was sent to. This keeps other sites from making their
 * visitors' browsers subscribe addresses; a script could forge the header, but then it gains nothing a
 * direct request would not, and the rate limits apply to it.
 */
export function fromSameSite(request: FastifyRequest): boolean {
  const source = request.headers.origin ?? request.headers.referer;
  if (!source || source === 'null') return false;
  try {
    return new URL(source).host.toLowerCase() === (request.headers.host ?? '').toLowerCase();
  } catch {
    return false;
  }
}
