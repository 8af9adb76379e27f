/**
 * The service's work that must happen once across replicas, as leader tasks (coordination/), and the
 * leader's scheduler following check changes made through other replicas' APIs.
 */
import type { AlertFanOut } from './alerting/fanout.ts';
import type { ReminderSweeper } from './alerting/reminders.ts';
import type { LeaderTask } from './coordination/leader-tasks.ts';
import type { CoordinationLog } from './coordination/log.ts';
import type { RunSignals } from './coordination/types.ts';
import type { Dispatcher } from './dispatch/dispatcher.ts';
import type { Scheduler } from './dispatch/scheduler.ts';
import type { HeartbeatMonitor } from './heartbeats/monitor.ts';
import type { LocationMetricsSampler } from './metrics/location-sampler.ts';
import type { AlertDeliveryWorker } from './notify/alert-delivery.ts';
import type { OutboxWorker } from './notify/outbox-worker.ts';
import type { RetentionSweeper } from './retention/sweeper.ts';
import type { Store } from './store/store.ts';
import type { SubscriptionExpirySweeper } from './subscriptions/expiry.ts';

export interface LeaderWorkers {
  dispatcher: Dispatcher;
  scheduler: Scheduler;
  heartbeats: HeartbeatMonitor;
  reminders: ReminderSweeper;
  notifier: OutboxWorker;
  subscriptionExpiry: SubscriptionExpirySweeper;
  alertFanOut: AlertFanOut;
  alertDelivery: AlertDeliveryWorker;
  locationSampler: LocationMetricsSampler;
  /** Deletes results and rollups past retention (retention/); optional for callers built before it. */
  retention?: RetentionSweeper;
}

/** In start order, which is also the stop order: producers of work stop before those that consume it. */
export function leaderTasksOf(w: LeaderWorkers): LeaderTask[] {
  return [
    // Lease expiry, queue TTL, result replay and pruning.
    { name: 'dispatch sweeps', start: () => w.dispatcher.startSweeper(), stop: () => w.dispatcher.stopSweeper() },
    { name: 'scheduler', start: () => w.scheduler.start(), stop: () => w.scheduler.stop() },
    { name: 'heartbeat monitor', start: () => w.heartbeats.start(), stop: () => w.heartbeats.stop() },
    { name: 'alert reminders', start: () => w.reminders.start(), stop: () => w.reminders.stop() },
    { name: 'subscriber outbox', start: () => w.notifier.start(), stop: () => w.notifier.stop() },
    { name: 'subscription expiry', start: () => w.subscriptionExpiry.start(), stop: () => w.subscriptionExpiry.stop() },
    { name: 'alert fan-out', start: () => w.alertFanOut.start(), stop: () => w.alertFanOut.stop() },
    { name: 'alert delivery', start: () => w.alertDelivery.start(), stop: () => w.alertDelivery.stop() },
    // The queue history of GET /v1/private-locations/{id}/metrics and its 15-day retention.
    { name: 'location metrics samples', start: () => w.locationSampler.start(), stop: () => w.locationSampler.stop() },
    // RESULT_RETENTION_DAYS and ROLLUP_RETENTION_MONTHS, in small batches.
    ...(w.retention ? [{ name: 'retention', start: () => w.retention?.start(), stop: () => w.retention?.stop() }] : []),
  ];
}

/**
 * What other replicas tell this one. A check changed through another replica's API: the scheduler
 * reads it again (it keeps entries only while this replica leads, so elsewhere this costs one read and
 * the idempotent cancellation of runs). Work committed by another replica: the worker looks now (a
 * worker that is not running, on a replica that does not lead, ignores the poke).
 */
export function followOtherReplicas(
  signals: RunSignals,
  w: { store: Store; scheduler: Scheduler; notifier: OutboxWorker; alertFanOut: AlertFanOut },
  log: CoordinationLog,
): void {
  const { store, scheduler } = w;
  signals.subscribe({
    workQueued: (kind) => (kind === 'alerts' ? w.alertFanOut.poke() : w.notifier.poke()),
    checkChanged: (accountId, checkId) => {
      void store.checks
        .get(accountId, checkId)
        .then((check) => scheduler.checkChanged(accountId, checkId, check))
        .catch((err: unknown) => log.error({ err, checkId }, "another replica's check change could not be applied"));
    },
  });
}
