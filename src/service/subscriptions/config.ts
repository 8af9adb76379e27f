/**
 * Double opt-in of status page subscriptions (README "Service" table): how long a PENDING
 * subscription waits for its confirmation before it is removed, and how soon subscribing the same
 * address again sends another confirmation.
 */
import { type Env, readInteger } from '../../shared/env.ts';

export interface SubscriptionConfig {
  /** A PENDING subscription not confirmed within this many hours is removed. */
  confirmHours: number;
  /** Subscribing a PENDING address again resends its confirmation at most once per this many minutes. */
  resendMinutes: number;
}

export function loadSubscriptionConfig(env: Env): SubscriptionConfig {
  return {
    confirmHours: readInteger(env, 'SUBSCRIPTION_CONFIRM_HOURS', 48, { min: 1, max: 720 }),
    resendMinutes: readInteger(env, 'SUBSCRIPTION_RESEND_MINUTES', 10, { min: 1, max: 1440 }),
  };
}

/** The times a new or repeated subscription is judged by, from `now`. */
export function confirmationPolicy(config: SubscriptionConfig, now: Date = new Date()) {
  return {
    now,
    expiresAt: new Date(now.getTime() + config.confirmHours * 3_600_000),
    resendAfter: new Date(now.getTime() - config.resendMinutes * 60_000),
  };
}
