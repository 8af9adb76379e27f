/**
 * Who is told about an alert, and what they are told: the pure rules of the fan-out (./fanout.ts).
 * A channel hears of an alert type when its flag for it is on; a muted check or group, or an active
 * maintenance window covering the check, tells nobody (the alert stays in the history either way).
 */
import type { AlertChannelSettings } from '../alert-channels/channel-config.ts';
import type { StoredCheckGroup } from '../store/check-group-types.ts';
import type { AlertType, CheckAlertRecord } from '../store/check-status-types.ts';
import type { MaintenanceWindow } from '../store/maintenance-window-types.ts';
import type { StoredCheck } from '../store/store.ts';
import type { AlertMessage } from '../notify/channels/types.ts';
import { activeWindowFor } from './maintenance.ts';

type Flag = 'sendFailure' | 'sendRecovery' | 'sendDegraded' | 'sslExpiry';

/** The channel flag each alert type obeys; a reminder (…_REMAIN) follows the alert it reminds of. */
const FLAG_OF: Record<AlertType, Flag> = {
  ALERT_FAILURE: 'sendFailure',
  ALERT_DEGRADED_FAILURE: 'sendFailure',
  ALERT_FAILURE_REMAIN: 'sendFailure',
  ALERT_RECOVERY: 'sendRecovery',
  ALERT_DEGRADED_RECOVERY: 'sendRecovery',
  ALERT_DEGRADED: 'sendDegraded',
  ALERT_FAILURE_DEGRADED: 'sendDegraded',
  ALERT_DEGRADED_REMAIN: 'sendDegraded',
  ALERT_SSL: 'sslExpiry',
};

/** Whether a channel with these flags is told about an alert of this type. */
export function channelWants(
  channel: AlertChannelSettings,
  alertType: AlertType,
  sslDaysRemaining: number | null,
): boolean {
  const flag = FLAG_OF[alertType];
  if (flag !== 'sslExpiry') return channel[flag];
  return channel.sslExpiry && sslDaysRemaining !== null && sslDaysRemaining <= channel.sslExpiryThreshold;
}

const tagsOf = (body: Record<string, unknown>): string[] =>
  Array.isArray(body.tags) ? body.tags.filter((t): t is string => typeof t === 'string') : [];

/** Why nobody is told about an alert raised at `at`, or null when the channels are. */
export function suppressionOf(
  check: StoredCheck,
  group: StoredCheckGroup | undefined,
  windows: readonly MaintenanceWindow[],
  at: Date,
): string | null {
  if (check.muted) return 'the check is muted';
  if (group?.muted) return `its group "${group.name}" is muted`;
  const groupTags = group ? tagsOf(group.body as unknown as Record<string, unknown>) : [];
  const active = activeWindowFor(windows, { tags: tagsOf(check.body), groupTags }, at);
  return active ? `maintenance window "${active.name}" (${active.id}) was active` : null;
}

/** The message every channel of one alert renders, frozen with the notification's id. */
export function messageOf(
  alert: CheckAlertRecord,
  facts: { notificationId: string; check: StoredCheck; group: StoredCheckGroup | undefined; publicUrl: URL },
): AlertMessage {
  return {
    notificationId: facts.notificationId,
    alertId: alert.id,
    alertType: alert.alertType,
    accountId: alert.accountId,
    checkId: alert.checkId,
    checkName: alert.name,
    checkType: alert.checkType,
    groupName: facts.group?.name ?? null,
    tags: tagsOf(facts.check.body),
    runLocation: alert.runLocation,
    responseTime: alert.responseTime,
    error: alert.error,
    statusCode: alert.statusCode,
    resultId: alert.resultId,
    resultUrl: new URL(`v1/check-results/${alert.checkId}/${alert.resultId}`, withSlash(facts.publicUrl)).toString(),
    startedAt: alert.startedAt,
    createdAt: alert.createdAt,
    // The days left when the SSL alert was raised, not now: a retried fan-out tells the same.
    sslDaysRemaining: alert.alertType === 'ALERT_SSL' ? alert.sslDaysRemaining : null,
    incidentKey: `outpost-check-${alert.checkId}`,
  };
}

/** PUBLIC_URL may carry a path prefix; the result link goes under it. */
const withSlash = (url: URL): URL => (url.pathname.endsWith('/') ? url : new URL(`${url.pathname}/`, url));
