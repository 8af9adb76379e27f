/**
 * Webhook delivery: a JSON POST signed with HMAC-SHA256 over `<t>.<body>` with the subscription's
 * secret, in the header `x-outpost-signature: t=<unix seconds>,v1=<hex>`. `x-outpost-delivery`
 * carries the idempotency key (also the body's `id`), the same on every retry of one delivery.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';
import type { Dispatcher } from 'undici';
import { sendHttp } from './channels/http.ts';
import type { OutboxEntry } from '../store/status-pages-types.ts';
import type { SubscriptionLinks } from '../subscriptions/links.ts';
import type { DeliveryOutcome } from './delivery.ts';
import { subscriberWebhookBody } from './subscriber-messages.ts';

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

/**
 * Posts one delivery through `dispatcher`, the outbound guard (src/service/outbound/), which refuses
 * internal addresses. A refusal is final.
 */
export async function sendWebhook(
  entry: OutboxEntry,
  opts: { timeoutMs: number; dispatcher: Dispatcher; links: SubscriptionLinks; now?: () => number },
): Promise<DeliveryOutcome> {
  if (!entry.secret) return { ok: false, permanent: true, error: 'the webhook subscription has no secret' };
  const body = subscriberWebhookBody(entry, opts.links);
  const headers = {
    'content-type': 'application/json',
    ...signedDeliveryHeaders(entry.id, entry.secret, body, (opts.now ?? Date.now)()),
  };
  return sendHttp({ method: 'POST', url: entry.address, headers, body }, { ...opts, receiver: 'the webhook' });
}

/** The idempotency key, and the signature when there is a secret: subscriber webhooks and WEBHOOK alert channels sign alike. */
export function signedDeliveryHeaders(
  deliveryId: string,
  secret: string | undefined,
  body: string,
  nowMs: number,
): Record<string, string> {
  const headers: Record<string, string> = { [DELIVERY_HEADER]: deliveryId };
  if (secret) {
    const timestamp = Math.floor(nowMs / 1000);
    headers[SIGNATURE_HEADER] = `t=${timestamp},v1=${webhookSignature(secret, timestamp, body)}`;
  }
  return headers;
}
