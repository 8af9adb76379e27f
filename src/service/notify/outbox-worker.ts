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
import { EventEmitter } from 'node:events';
import type { Dispatcher } from 'undici';
import type { OutboundConfig } from '../outbound/config.ts';
import { createOutboundDispatcher } from '../outbound/dispatcher.ts';
import { OutboundPolicy } from '../outbound/policy.ts';
import type { OutboxEntry } from '../store/status-pages-types.ts';
import type { Store } from '../store/store.ts';
import type { NotifyConfig } from './config.ts';
import type { DeliveryOutcome } from './delivery.ts';
import { createEmailSender, type EmailSender } from './email.ts';
import { sendWebhook } from './webhook.ts';

/** Deliveries claimed per round; a round's sends run concurrently. */
const BATCH = 20;

interface Logger {
  info(obj: object, msg: string): void;
  warn(obj: object, msg: string): void;
  error(obj: object, msg: string): void;
}

export interface OutboxWorkerOptions {
  store: Store;
  config: NotifyConfig;
  /** What webhooks may reach besides public addresses (OUTBOUND_ALLOW). */
  outbound: OutboundConfig;
  log: Logger;
  /** Domain of email Message-IDs: the host of the service's PUBLIC_URL. */
  messageIdDomain: string;
  random?: () => number;
}

/**
 * Exponential backoff with "equal jitter": half of base·2^(attempt-1) (capped) plus a random share
 * of the other half, so retries spread out but never come sooner than half the nominal delay.
 */
export function retryDelayMs(attempt: number, baseMs: number, maxMs: number, random: () => number = Math.random): number {
  const nominal = Math.min(maxMs, baseMs * 2 ** Math.min(Math.max(0, attempt - 1), 40));
  return Math.round(nominal / 2 + random() * (nominal / 2));
}

export interface OutboxWorkerEvents {
  delivered: [entry: OutboxEntry];
  retry: [entry: OutboxEntry, error: string, delayMs: number];
  failed: [entry: OutboxEntry, reason: string];
  undeliverable: [entry: OutboxEntry, reason: string];
}

export class OutboxWorker extends EventEmitter<OutboxWorkerEvents> {
  readonly #store: Store;
  readonly #config: NotifyConfig;
  readonly #log: Logger;
  readonly #random: () => number;
  readonly #email: EmailSender | null;
  /** Every webhook goes through the outbound guard. */
  readonly #http: Dispatcher;
  #timer: NodeJS.Timeout | null = null;
  #running: Promise<void> | null = null;
  #again = false;
  #started = false;
  #stopped = false;

  constructor(opts: OutboxWorkerOptions) {
    super();
    this.#store = opts.store;
    this.#config = opts.config;
    this.#log = opts.log;
    this.#random = opts.random ?? Math.random;
    this.#email = opts.config.smtpUrl
      ? createEmailSender({
          smtpUrl: opts.config.smtpUrl,
          from: opts.config.smtpFrom,
          domain: opts.messageIdDomain,
          timeoutMs: opts.config.timeoutMs,
        })
      : null;
    this.#http = createOutboundDispatcher(new OutboundPolicy(opts.outbound), { connectTimeoutMs: opts.config.timeoutMs });
  }

  /** Starts working off the outbox, including whatever a previous process left pending. */
  start(): void {
    if (this.#started) return;
    this.#started = true;
    this.poke();
  }

  /** New deliveries were queued: look now rather than at the next poll. */
  poke(): void {
    if (!this.#started || this.#stopped) return;
    if (this.#running) {
      this.#again = true;
      return;
    }
    this.#clearTimer();
    this.#running = this.#drain().finally(() => {
      this.#running = null;
      if (!this.#stopped) void this.#scheduleNext();
    });
  }

  /** Stops polling and waits for sends in flight to be recorded; pending deliveries stay in the outbox. */
  async stop(): Promise<void> {
    this.#stopped = true;
    this.#clearTimer();
    await this.#running;
    this.#email?.close();
    await this.#http.close();
  }

  /** The lease outlives one send's timeout, so a slow but live send is never claimed twice. */
  get #leaseMs(): number {
    return this.#config.timeoutMs * 3 + 5_000;
  }

  async #drain(): Promise<void> {
    do {
      this.#again = false;
      let claimed: OutboxEntry[];
      try {
        claimed = await this.#store.outbox.claimDue(new Date(), BATCH, this.#leaseMs);
      } catch (err) {
        this.#log.error({ err }, 'notification outbox: claiming deliveries failed; retrying at the next poll');
        return;
      }
      await Promise.all(claimed.map((entry) => this.#deliver(entry)));
      if (claimed.length === BATCH) this.#again = true;
    } while (this.#again && !this.#stopped);
  }

  async #deliver(entry: OutboxEntry): Promise<void> {
    const outcome = await this.#send(entry);
    try {
      if (outcome === 'undeliverable') {
        const reason = 'SMTP_URL is not set, so the service cannot send email';
        this.#log.warn({ deliveryId: entry.id, address: entry.address }, `notification not delivered: ${reason}`);
        await this.#store.outbox.markFinal(entry.id, 'undeliverable', reason);
        this.emit('undeliverable', entry, reason);
      } else if (outcome.ok) {
        await this.#store.outbox.markDelivered(entry.id, new Date());
        this.emit('delivered', entry);
      } else if (outcome.permanent || entry.attempts >= this.#config.maxAttempts) {
        const reason = outcome.permanent ? outcome.error : `gave up after ${entry.attempts} attempts; last: ${outcome.error}`;
        this.#log.warn({ deliveryId: entry.id, channel: entry.channel, address: entry.address }, `notification failed: ${reason}`);
        await this.#store.outbox.markFinal(entry.id, 'failed', reason);
        this.emit('failed', entry, reason);
      } else {
        const delayMs = retryDelayMs(entry.attempts, this.#config.backoffBaseMs, this.#config.backoffMaxMs, this.#random);
        await this.#store.outbox.reschedule(entry.id, new Date(Date.now() + delayMs), outcome.error);
        this.emit('retry', entry, outcome.error, delayMs);
      }
    } catch (err) {
      // The lease runs out and the delivery is tried again: at least once, never lost.
      this.#log.error({ err, deliveryId: entry.id }, 'notification outbox: recording a delivery attempt failed');
    }
  }

  async #send(entry: OutboxEntry): Promise<DeliveryOutcome | 'undeliverable'> {
    if (entry.channel === 'WEBHOOK') return sendWebhook(entry, { timeoutMs: this.#config.timeoutMs, dispatcher: this.#http });
    if (!this.#email) return 'undeliverable';
    return this.#email.send(entry);
  }

  /** Sleeps until the earliest pending delivery is due, or the poll interval, whichever is sooner. */
  async #scheduleNext(): Promise<void> {
    let due: string | null = null;
    try {
      due = await this.#store.outbox.nextDueAt();
    } catch (err) {
      this.#log.error({ err }, 'notification outbox: reading the next due time failed');
    }
    if (this.#stopped || this.#running) return;
    const untilDue = due === null ? Number.POSITIVE_INFINITY : Math.max(0, Date.parse(due) - Date.now());
    this.#clearTimer();
    this.#timer = setTimeout(() => this.poke(), Math.min(untilDue, this.#config.pollMs));
    // The poll alone must not keep a process alive that is otherwise done.
    this.#timer.unref();
  }

  #clearTimer(): void {
    if (this.#timer) clearTimeout(this.#timer);
    this.#timer = null;
  }
}
