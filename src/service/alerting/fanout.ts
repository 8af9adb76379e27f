/**
 * The fan-out: turns each alert not yet fanned out (check_alerts.fanned_out_at NULL) into one stored
 * notification per channel that is told about it (./who-is-told.ts), in one store transaction per
 * alert that also marks it fanned out. A crash before that commit leaves the alert pending, so the
 * next start fans it out; one after it leaves nothing to redo. The alert's own write (in the status
 * transaction, once per result) stays as cheap as before: channels and windows are read here, off
 * that path, only for alerts.
 */
import { randomUUID } from 'node:crypto';
import { maskChannelSecrets } from '../alert-channels/channel-secrets.ts';
import { groupOf } from '../checks/group-of.ts';
import { PollingWorker } from '../notify/poll-loop.ts';
import type { AlertNotificationDraft } from '../store/alert-notification-types.ts';
import type { AlertChannelTarget } from '../store/alert-channel-types.ts';
import type { CheckAlertRecord } from '../store/check-status-types.ts';
import type { Store } from '../store/store.ts';
import { channelWants, messageOf, suppressionOf } from './who-is-told.ts';
import type { Log } from '../../shared/log.ts';

export interface AlertFanOutOptions {
  store: Store;
  /** The base of result links in messages (PUBLIC_URL). */
  publicUrl: URL;
  /** How often to look for alerts nobody poked about (e.g. left by a crash or another process). */
  pollMs: number;
  log: Pick<Log, 'error'>;
  /** Notifications were queued: the delivery worker should look now. */
  onQueued(): void;
}

export class AlertFanOut extends PollingWorker<CheckAlertRecord> {
  readonly #opts: AlertFanOutOptions;
  /** Alerts whose fan-out failed: passed over until no other alert is pending, then tried at the next poll. */
  readonly #deferred = new Set<number>();

  constructor(opts: AlertFanOutOptions) {
    super({
      name: 'alert fan-out',
      claim: (limit) => this.#claim(limit),
      pollMs: opts.pollMs,
      // One at a time: a pending alert is not leased, so two in hand could be the same one.
      maxInFlight: 1,
      log: opts.log,
    });
    this.#opts = opts;
  }

  async #claim(limit: number): Promise<CheckAlertRecord[]> {
    const pending = await this.#opts.store.alertNotifications.pendingAlerts(limit + this.#deferred.size);
    const ready = pending.filter((a) => !this.#deferred.has(a.id)).slice(0, limit);
    if (ready.length === 0) this.#deferred.clear();
    return ready;
  }

  protected async handle(alert: CheckAlertRecord): Promise<void> {
    try {
      await this.fanOut(alert);
      this.#deferred.delete(alert.id);
    } catch (err) {
      // One alert that cannot be fanned out (a row its reads choke on) must not hold back the others.
      this.#deferred.add(alert.id);
      throw err;
    }
  }

  /** Fans one alert out; returns how many notifications it queued. */
  async fanOut(alert: CheckAlertRecord): Promise<number> {
    const { store } = this.#opts;
    const check = await store.checks.get(alert.accountId, alert.checkId);
    if (!check) return store.alertNotifications.fanOut(alert.id, [], 'the check was deleted', new Date());
    const group = await groupOf(store, check);
    const windows = await store.maintenanceWindows.listAll(alert.accountId);
    const suppressed = suppressionOf(check, group, windows, new Date(alert.createdAt));
    let drafts: AlertNotificationDraft[] = [];
    if (suppressed === null) {
      const channels = await store.alertChannels.listSubscribedTo(alert.accountId, alert.checkId, group?.id ?? null);
      drafts = channels
        .filter((c) => channelWants(c, alert.alertType, alert.sslDaysRemaining))
        .map((c) =>
          draftFor(
            c,
            messageOf(alert, { notificationId: randomUUID(), check, group, publicUrl: this.#opts.publicUrl }),
          ),
        );
    }
    const queued = await store.alertNotifications.fanOut(alert.id, drafts, suppressed, new Date());
    if (queued > 0) this.#opts.onQueued();
    return queued;
  }
}

const draftFor = (channel: AlertChannelTarget, message: AlertNotificationDraft['message']): AlertNotificationDraft => ({
  alertChannelId: channel.id,
  channelType: channel.definition.type,
  message,
  alertConfig: maskChannelSecrets(channel.definition).config,
});
