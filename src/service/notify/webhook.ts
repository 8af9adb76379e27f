/**
 * Webhook delivery: a JSON POST signed with HMAC-SHA256 over `<t>.<body>` with the subscription's
 * secret, in the header `x-outpost-signature: t=<unix seconds>,v1=<hex>`. `x-outpost-delivery`
 * carries the idempotency key (also the body's `id`), the same on every retry of one delivery.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';
import { type Dispatcher, request } from 'undici';
import { OutboundRefusedError } from '../outbound/policy.ts';
import type { OutboxEntry } from '../store/status-pages-types.ts';
import type { DeliveryOutcome } from './delivery.ts';

export const SIGNATURE_HEADER = 'x-outpost-signature';
export const DELIVERY_HEADER = 'x-outpost-delivery';

export function webhookSignature(secret: string, timestamp: number, body: string): string {
  return createHmac('sha256', secret).update(`${timestamp}.${body}`).digest('hex');
}

/**
 * Checks a signature header the way a receiver should: the HMAC matches (in constant time) and the
 * timestamp is within `toleranceSeconds` of now, which bounds how long a captured request replays.
 */
export function verifyWebhookSignature(
  secret: string,
  header: string | undefined,
  body: string,
  { toleranceSeconds = 300, now = Date.now() }: { toleranceSeconds?: number; now?: number } = {},
): boolean {
  const match = header ? /^t=(\d+),v1=([0-9a-f]{64})$/.exec(header) : null;
  if (!match?.[1] || !match[2]) return false;
  const timestamp = Number(match[1]);
  if (Math.abs(now / 1000 - timestamp) > toleranceSeconds) return false;
  const expected = Buffer.from(webhookSignature(secret, timestamp, body), 'hex');
  return timingSafeEqual(expected, Buffer.from(match[2], 'hex'));
}

/** The webhook body: the frozen notification plus its idempotency key. */
export function webhookBody(entry: OutboxEntry): string {
  return JSON.stringify({ id: entry.id, type: 'incident.update', createdAt: entry.createdAt, ...entry.payload });
}

/** 408 and 429 say "later"; other 4xx answers say the request itself is refused. */
const RETRYABLE_4XX = new Set([408, 425, 429]);

/**
 * Posts one delivery through `dispatcher`, the outbound guard (src/service/outbound/), which refuses
 * internal addresses. A refusal is final. Redirects are not followed: a receiver answers at its URL.
 */
export async function sendWebhook(
  entry: OutboxEntry,
  opts: { timeoutMs: number; dispatcher: Dispatcher; now?: () => number },
): Promise<DeliveryOutcome> {
  if (!entry.secret) return { ok: false, permanent: true, error: 'the webhook subscription has no secret' };
  const body = webhookBody(entry);
  const timestamp = Math.floor((opts.now ?? Date.now)() / 1000);
  try {
    const response = await request(entry.address, {
      dispatcher: opts.dispatcher,
      method: 'POST',
      body,
      headers: {
        'content-type': 'application/json',
        'user-agent': 'outpost-notifier',
        [DELIVERY_HEADER]: entry.id,
        [SIGNATURE_HEADER]: `t=${timestamp},v1=${webhookSignature(entry.secret, timestamp, body)}`,
      },
      headersTimeout: opts.timeoutMs,
      bodyTimeout: opts.timeoutMs,
      signal: AbortSignal.timeout(opts.timeoutMs),
    });
    // The answer's body is not used; reading it to the end frees the connection.
    await response.body.dump();
    const status = response.statusCode;
    if (status >= 200 && status < 300) return { ok: true };
    const permanent = status >= 400 && status < 500 && !RETRYABLE_4XX.has(status);
    return { ok: false, permanent, error: `the webhook answered HTTP ${status}` };
  } catch (err) {
    if (err instanceof OutboundRefusedError) return { ok: false, permanent: true, error: err.message };
    const e = err as Error & { code?: string };
    return { ok: false, permanent: false, error: `the webhook request failed: ${e.code ? `${e.code} ` : ''}${e.message}` };
  }
}
