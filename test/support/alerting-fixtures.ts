/**
 * What the store-level alerting tests build on: an account with a location and a check, results
 * stored pending their status update, and alerts raised through CheckStatusRepo.applyResult, as the
 * dispatcher raises them.
 */
import { messageOf } from '../../src/service/alerting/who-is-told.ts';
import type { AlertChannelInput } from '../../src/service/store/alert-channel-types.ts';
import type { AlertNotificationDraft } from '../../src/service/store/alert-notification-types.ts';
import type { CheckGroupBody, CheckGroupInput } from '../../src/service/store/check-group-types.ts';
import {
  type AlertType,
  type CheckAlertRecord,
  type CheckStatusRecord,
  emptyCheckStatus,
  type StatusUpdate,
} from '../../src/service/store/check-status-types.ts';
import type { Store, StoredCheck } from '../../src/service/store/store.ts';
import type { RunResult } from '../../src/shared/protocol.ts';
import { checkGroupBody } from './accounts-check-bodies.ts';
import { accountWithCheck } from './fresh-account.ts';

export { addCheck } from './fresh-account.ts';

export interface Tenant {
  accountId: string;
  locationId: string;
  check: StoredCheck;
}

export async function seedTenant(store: Store, name = 'Acme'): Promise<Tenant> {
  const { accountId, location, check } = await accountWithCheck(store, name);
  return { accountId, locationId: location.id, check };
}

/** Stores a FINAL result of the check, pending its status update (what the dispatcher's submit does first). */
export async function storePending(store: Store, t: Tenant, at: string, check: StoredCheck = t.check): Promise<string> {
  const runId = crypto.randomUUID();
  const stored = await store.results.insertOnce({
    accountId: t.accountId,
    checkId: check.id,
    runId,
    checkName: check.name,
    locationId: t.locationId,
    runLocation: 'office',
    attempts: 1,
    resultType: 'FINAL',
    createdAt: at,
    pendingStatus: { dueAt: at },
    payload: { runId, checkId: check.id, responseTime: 10, hasFailures: true } as RunResult,
  });
  return stored.id;
}

/** A status update that counts one more failed run and raises `alertType` (if given). */
export function failedRun(
  prev: CheckStatusRecord | undefined,
  resultId: string,
  at: string,
  alertType?: AlertType,
): StatusUpdate {
  const base = prev ?? emptyCheckStatus({ id: '', accountId: '', name: '', createdAt: at });
  const failed = base.alert.consecutiveFailedRuns + 1;
  return {
    status: {
      hasFailures: true,
      hasErrors: false,
      isDegraded: false,
      longestRun: Math.max(base.longestRun ?? 0, failed),
      shortestRun: 1,
      lastRunLocation: 'office',
      lastCheckRunId: resultId,
      sslDaysRemaining: null,
      alert: { ...base.alert, state: 'FAILING', consecutiveFailedRuns: failed },
    },
    alerts: alertType ? [newAlert(alertType, resultId, at)] : [],
    nextReminderAt: null,
  };
}

export function newAlert(alertType: AlertType, resultId: string, at: string) {
  return {
    name: 'Home',
    checkType: 'API',
    alertType,
    runLocation: 'office',
    responseTime: 10,
    error: 'status 500',
    statusCode: '500',
    resultId,
    startedAt: at,
    sslDaysRemaining: null,
  };
}

/** Stores a result and applies it, raising one alert of `alertType`: the alert as the store recorded it. */
export async function raiseAlert(
  store: Store,
  t: Tenant,
  at: string,
  alertType: AlertType = 'ALERT_FAILURE',
  check = t.check,
): Promise<CheckAlertRecord> {
  const resultId = await storePending(store, t, at, check);
  const applied = await store.checkStatuses.applyResult(t.accountId, check.id, resultId, at, (prev) =>
    failedRun(prev, resultId, at, alertType),
  );
  const alert = applied?.alerts[0];
  if (!alert) throw new Error('the result raised no alert');
  return alert;
}

/** The documented defaults of a channel's settings: what the API stores when a create leaves them out. */
export const CHANNEL_DEFAULTS = {
  sendRecovery: true,
  sendFailure: true,
  sendDegraded: false,
  sslExpiry: false,
  sslExpiryThreshold: 30,
  autoSubscribe: false,
} as const;

export function webhookChannel(url: string, overrides: Partial<AlertChannelInput> = {}): AlertChannelInput {
  return {
    definition: {
      type: 'WEBHOOK',
      config: { url, method: 'POST', headers: [], queryParameters: [], webhookSecret: 'hook-secret-value' },
    },
    ...CHANNEL_DEFAULTS,
    ...overrides,
  };
}

/** The draft the fan-out would queue for one channel of the check's alert. */
export function draftFor(check: StoredCheck, alert: CheckAlertRecord, channelId: number): AlertNotificationDraft {
  return {
    alertChannelId: channelId,
    channelType: 'WEBHOOK',
    alertConfig: { url: 'http://127.0.0.1/hook', method: 'POST', headers: [], queryParameters: [] },
    message: messageOf(alert, {
      notificationId: crypto.randomUUID(),
      check,
      group: undefined,
      publicUrl: new URL('http://127.0.0.1/'),
    }),
  };
}

/** A check group as the API would store it, defaults filled (one at a time, no base URL, no retries). */
export function groupInput(
  name: string,
  overrides: Partial<CheckGroupBody> = {},
  locationIds: string[] = [],
): CheckGroupInput {
  const body = checkGroupBody(name, {
    concurrency: 1,
    apiCheckDefaults: { url: null, headers: [], queryParameters: [], assertions: [], basicAuth: null },
    retryStrategy: null,
    ...overrides,
  });
  return { name, activated: body.activated, muted: body.muted, concurrency: body.concurrency, locationIds, body };
}
