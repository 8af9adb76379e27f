/**
 * Delivers stored alert notifications (written by alerting/fanout.ts): claims due ones with a lease,
 * loads each one's channel (its secrets opened only in memory), hands the frozen message to the
 * channel's sender (./channels/), and records the outcome: delivered, retried with backoff, or
 * failed (a permanent error, NOTIFY_MAX_ATTEMPTS spent, or the channel deleted meanwhile).
 *
 * At least once, at most once per attempt: a crash after a claim makes the notification due again
 * when its lease runs out, and every attempt carries the same notification id (the idempotency key).
 *
 * Events (for tests and metrics): 'delivered' (notification, outcome), 'retry' (notification,
 * error, delayMs), 'failed' (notification, reason).
 */
import type { AlertChannelDefinition } from '../alert-channels/channel-config.ts';
import type { AlertNotificationRecord } from '../store/alert-notification-types.ts';
import type { Store } from '../store/store.ts';
import { afterAttempt } from './attempts.ts';
import type { AlertMessage, ChannelSender, ChannelSenders, SendContext, SendOutcome } from './channels/types.ts';
import type { NotifyConfig } from './config.ts';
import { leasedClaims } from './leased-claims.ts';
import { PollingWorker } from './poll-loop.ts';
import type { Log } from '../../shared/log.ts';

/** Notifications in hand at once: one slow receiver takes one of them. */
const IN_FLIGHT = 32;
/** Past the senders' own timeout, the worker stops waiting for a sender that ignores it. */
const TIMEOUT_GRACE_MS = 1_000;

export interface AlertDeliveryOptions {
  store: Store;
  config: NotifyConfig;
  senders: ChannelSenders;
  /** What the senders need besides the timeout and the clock (both come from here). */
  context: Omit<SendContext, 'timeoutMs' | 'now'>;
  log: Pick<Log, 'warn' | 'error'>;
  random?: () => number;
}

export interface AlertDeliveryEvents {
  delivered: [notification: AlertNotificationRecord, outcome: SendOutcome];
  retry: [notification: AlertNotificationRecord, error: string, delayMs: number];
  failed: [notification: AlertNotificationRecord, reason: string];
}

export class AlertDeliveryWorker extends PollingWorker<AlertNotificationRecord, AlertDeliveryEvents> {
  readonly #opts: AlertDeliveryOptions;
  readonly #ctx: SendContext;

  constructor(opts: AlertDeliveryOptions) {
    super({
      name: 'alert delivery',
      ...leasedClaims(opts.store.alertNotifications, opts.config),
      maxInFlight: IN_FLIGHT,
      log: opts.log,
    });
    this.#opts = opts;
    this.#ctx = { ...opts.context, timeoutMs: opts.config.timeoutMs, now: Date.now };
  }

  protected async handle(n: AlertNotificationRecord): Promise<void> {
    const outcome = await this.#attempt(n);
    const result = outcome.detail ?? null;
    const { store, config, random = Math.random } = this.#opts;
    try {
      const step = afterAttempt(outcome, n.attempts, config, random);
      if (step.next === 'delivered') {
        await store.alertNotifications.markDelivered(n.id, new Date(), result);
        this.emit('delivered', n, outcome);
      } else if (step.next === 'failed') {
        this.#opts.log.warn(
          { notificationId: n.id, alertChannelId: n.alertChannelId },
          `alert notification failed: ${step.reason}`,
        );
        await store.alertNotifications.markFailed(n.id, step.reason, result);
        this.emit('failed', n, step.reason);
      } else {
        await store.alertNotifications.reschedule(n.id, new Date(Date.now() + step.delayMs), step.error, result);
        this.emit('retry', n, step.error, step.delayMs);
      }
    } catch (err) {
      // The lease runs out and the notification is tried again: at least once, never lost.
      this.#opts.log.error({ err, notificationId: n.id }, 'alert delivery: recording an attempt failed');
    }
  }

  /** One attempt: the channel as it is now, its sender, bounded by the timeout. */
  async #attempt(n: AlertNotificationRecord): Promise<SendOutcome> {
    const channel = await this.#opts.store.alertChannels.getTarget(n.accountId, n.alertChannelId);
    if (!channel)
      return { ok: false, permanent: true, error: 'the alert channel was deleted before the notification was sent' };
    try {
      return await withTimeout(
        send(this.#opts.senders, n.message, channel.definition, this.#ctx),
        this.#ctx.timeoutMs + TIMEOUT_GRACE_MS,
      );
    } catch (err) {
      return {
        ok: false,
        permanent: false,
        error: `the ${channel.definition.type} sender failed: ${(err as Error).message}`,
      };
    }
  }
}

/** The sender of the definition's type, called with that definition (the union narrowed by its tag). */
function send(
  senders: ChannelSenders,
  message: AlertMessage,
  definition: AlertChannelDefinition,
  ctx: SendContext,
): Promise<SendOutcome> {
  const sender = senders[definition.type] as ChannelSender;
  return sender(message, definition as never, ctx);
}

/** The send's outcome, or a transient failure once `ms` pass without one. */
async function withTimeout(sending: Promise<SendOutcome>, ms: number): Promise<SendOutcome> {
  let timer: NodeJS.Timeout | undefined;
  const timedOut = new Promise<SendOutcome>((resolve) => {
    timer = setTimeout(() => resolve({ ok: false, permanent: false, error: `no answer within ${ms} ms` }), ms);
  });
  try {
    return await Promise.race([sending, timedOut]);
  } finally {
    clearTimeout(timer);
  }
}
