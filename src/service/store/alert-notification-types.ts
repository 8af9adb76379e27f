/**
 * Alert notifications (GET /v1/alert-notifications): one per alert and channel told about it, stored
 * before it is sent. The id is the idempotency key every attempt carries.
 */
import type { AlertChannelDefinition, AlertChannelType } from '../alert-channels/channel-config.ts';
import type { AlertMessage } from '../notify/channels/types.ts';
import type { CheckAlertRecord } from './check-status-types.ts';

/** pending: to be sent (or being sent); delivered: a receiver accepted it; failed: given up, last_error says why. */
export type AlertNotificationState = 'pending' | 'delivered' | 'failed';

/** What the fan-out queues for one channel: the message frozen, the channel's config masked. */
export interface AlertNotificationDraft {
  alertChannelId: number;
  channelType: AlertChannelType;
  message: AlertMessage;
  alertConfig: AlertChannelDefinition['config'];
}

export interface AlertNotificationRecord {
  id: string;
  accountId: string;
  checkId: string;
  checkAlertId: number;
  /** Kept when the channel is deleted: the history still names it. */
  alertChannelId: number;
  channelType: AlertChannelType;
  message: AlertMessage;
  alertConfig: AlertChannelDefinition['config'];
  state: AlertNotificationState;
  attempts: number;
  nextAttemptAt: string;
  lastAttemptAt: string | null;
  lastError: string | null;
  notificationResult: string | null;
  createdAt: string;
  sentAt: string | null;
}

export interface AlertNotificationQuery {
  /** Inclusive lower and exclusive upper bound of created_at, ISO strings. */
  from: string;
  to: string;
  alertChannelId?: number;
  /** true: only failed ones; false: only those not failed. */
  hasFailures?: boolean;
  limit: number;
  page: number;
}

export interface AlertNotificationRepo {
  /** Alerts not yet fanned out, oldest first. */
  pendingAlerts(limit: number): Promise<CheckAlertRecord[]>;
  /**
   * In one transaction: queues the drafts (one per alert and channel: a draft already queued, or
   * for a channel deleted meanwhile, is skipped) and marks the alert fanned out, with the reason
   * when nothing was sent on purpose. An alert already fanned out is left alone. Returns how many it queued.
   */
  fanOut(
    alertId: number,
    drafts: AlertNotificationDraft[],
    suppressedReason: string | null,
    now: Date,
  ): Promise<number>;
  /** Leases up to `limit` due pending notifications (due again when the lease runs out) and counts the attempt. */
  claimDue(now: Date, limit: number, leaseMs: number): Promise<AlertNotificationRecord[]>;
  markDelivered(id: string, at: Date, result: string | null): Promise<void>;
  reschedule(id: string, nextAttemptAt: Date, error: string, result: string | null): Promise<void>;
  markFailed(id: string, error: string, result: string | null): Promise<void>;
  /** The earliest next_attempt_at of a pending notification. */
  nextDueAt(): Promise<string | null>;
  /** How many notifications are pending (due or not): the alert outbox depth. */
  pendingCount(): Promise<number>;
  /** Newest first. */
  list(accountId: string, query: AlertNotificationQuery): Promise<AlertNotificationRecord[]>;
  /** The alert's notifications and its fan-out mark (for tests and diagnosis). */
  forAlert(
    alertId: number,
  ): Promise<{ fannedOutAt: string | null; suppressedReason: string | null; notifications: AlertNotificationRecord[] }>;
}
