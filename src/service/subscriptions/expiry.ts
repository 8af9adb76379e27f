/**
 * Removes PENDING subscriptions whose confirmation period ran out (SUBSCRIPTION_CONFIRM_HOURS), on a
 * timer. The links of such a subscription stop working at its expiry whether or not a sweep has run
 * yet (the store checks the time); the sweep only keeps the table from filling with addresses that
 * never confirmed.
 */
import { RepeatingTask } from '../repeating-task.ts';
import type { SubscriptionRepo } from '../store/status-pages-types.ts';
import type { Log } from '../../shared/log.ts';

/** Often enough that an expired address is gone within minutes; each sweep is one indexed DELETE. */
const SWEEP_EVERY_MS = 10 * 60_000;

export class SubscriptionExpirySweeper extends RepeatingTask {
  readonly #subscriptions: SubscriptionRepo;
  readonly #log: Pick<Log, 'info' | 'error'>;

  constructor(opts: { subscriptions: SubscriptionRepo; log: Pick<Log, 'info' | 'error'> }) {
    super(SWEEP_EVERY_MS);
    this.#subscriptions = opts.subscriptions;
    this.#log = opts.log;
  }

  protected tick(): Promise<number> {
    return this.sweep();
  }

  /** Removes what expired before `now` (tests pass a later time instead of waiting); resolves to how many. */
  async sweep(now: Date = new Date()): Promise<number> {
    try {
      const removed = await this.#subscriptions.deleteExpired(now);
      if (removed > 0) this.#log.info({ removed }, 'removed unconfirmed status page subscriptions');
      return removed;
    } catch (err) {
      // The next sweep tries again; an expired link is refused meanwhile anyway.
      this.#log.error({ err }, 'removing unconfirmed subscriptions failed');
      return 0;
    }
  }
}
