/**
 * Works off the notification outbox: claims due deliveries (a lease, so a crash mid-send makes the
 * delivery due again), sends each by its channel, and marks it delivered only after the receiver
 * accepted it. Failures are retried with exponential backoff and jitter until maxAttempts.
 *
 * Delivery is at least once: a crash between a successful send and the mark re-sends after the
 * lease. Every attempt of one delivery carries the same idempotency key (webhook header and body
 * `id`, email Message-ID), so a receiver that dedupes by it sees each notification once.
 *
 * Events (for tests and metrics): 'delivered' (entry), 'retry' (entry, error, delayMs),
 * 'failed' (entry, reason), 'undeliverable' (entry, reason), 'error' is never emitted: a store
 * failure is logged and the next poll tries again.
 */
import type { Dispatcher } from 'undici';
import type { OutboxEntry } from '../store/status-pages-types.ts';
import type { Store } from '../store/store.ts';
import type { NotifyConfig } from './config.ts';
import type { ClosableMailTransport } from './channels/mail-transport.ts';
import type { DeliveryOutcome } from './delivery.ts';
import { createEmailSender, type EmailSender } from './email.ts';
import { afterAttempt, retryDelayMs } from './attempts.ts';
import { leasedClaims } from './leased-claims.ts';
import { PollingWorker } from './poll-loop.ts';
import { sendWebhook } from './webhook.ts';
import { type SubscriptionLinks, subscriptionLinks } from '../subscriptions/links.ts';
import type { Log } from '../../shared/log.ts';

/** Deliveries in hand at once; their sends run concurrently. */
const IN_FLIGHT = 20;

export interface OutboxWorkerOptions {
  store: Store;
  config: NotifyConfig;
  /** The outbound guard every webhook goes through (OUTBOUND_ALLOW); its owner closes it. */
  http: Dispatcher;
  /** The service's SMTP transport, null without SMTP_URL; its owner closes it. */
  mail: Pick<ClosableMailTransport, 'send'> | null;
  log: Pick<Log, 'info' | 'warn' | 'error'>;
  /** PUBLIC_URL: its host is the domain of email Message-IDs, and confirm and unsubscribe links point at it. */
  publicUrl: URL;
  random?: () => number;
}

export { retryDelayMs };

export interface OutboxWorkerEvents {
  delivered: [entry: OutboxEntry];
  retry: [entry: OutboxEntry, error: string, delayMs: number];
  failed: [entry: OutboxEntry, reason: string];
  undeliverable: [entry: OutboxEntry, reason: string];
}

export class OutboxWorker extends PollingWorker<OutboxEntry, OutboxWorkerEvents> {
  readonly #store: Store;
  readonly #config: NotifyConfig;
  readonly #log: Pick<Log, 'info' | 'warn' | 'error'>;
  readonly #random: () => number;
  readonly #email: EmailSender | null;
  readonly #http: Dispatcher;
  readonly #links: SubscriptionLinks;

  constructor(opts: OutboxWorkerOptions) {
    super({
      name: 'notification outbox',
      ...leasedClaims(opts.store.outbox, opts.config),
      maxInFlight: IN_FLIGHT,
      log: opts.log,
    });
    this.#store = opts.store;
    this.#config = opts.config;
    this.#log = opts.log;
    this.#random = opts.random ?? Math.random;
    this.#links = subscriptionLinks(opts.publicUrl);
    this.#email = opts.mail ? createEmailSender(opts.mail, opts.publicUrl.hostname, this.#links) : null;
    this.#http = opts.http;
  }

  protected async handle(entry: OutboxEntry): Promise<void> {
    const outcome = await this.#send(entry);
    try {
      if (outcome === 'undeliverable') {
        const reason = 'SMTP_URL is not set, so the service cannot send email';
        this.#log.warn({ deliveryId: entry.id, address: entry.address }, `notification not delivered: ${reason}`);
        await this.#store.outbox.markFinal(entry.id, 'undeliverable', reason);
        this.emit('undeliverable', entry, reason);
        return;
      }
      const step = afterAttempt(outcome, entry.attempts, this.#config, this.#random);
      if (step.next === 'delivered') {
        await this.#store.outbox.markDelivered(entry.id, new Date());
        this.emit('delivered', entry);
      } else if (step.next === 'failed') {
        this.#log.warn(
          { deliveryId: entry.id, channel: entry.channel, address: entry.address },
          `notification failed: ${step.reason}`,
        );
        await this.#store.outbox.markFinal(entry.id, 'failed', step.reason);
        this.emit('failed', entry, step.reason);
      } else {
        await this.#store.outbox.reschedule(entry.id, new Date(Date.now() + step.delayMs), step.error);
        this.emit('retry', entry, step.error, step.delayMs);
      }
    } catch (err) {
      // The lease runs out and the delivery is tried again: at least once, never lost.
      this.#log.error({ err, deliveryId: entry.id }, 'notification outbox: recording a delivery attempt failed');
    }
  }

  async #send(entry: OutboxEntry): Promise<DeliveryOutcome | 'undeliverable'> {
    if (entry.channel === 'WEBHOOK')
      return sendWebhook(entry, { timeoutMs: this.#config.timeoutMs, dispatcher: this.#http, links: this.#links });
    if (!this.#email) return 'undeliverable';
    return this.#email.send(entry);
  }
}
