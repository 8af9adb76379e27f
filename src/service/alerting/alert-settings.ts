/**
 * The alert settings that apply to a check: the account's (this service has no account settings,
 * so the reference's defaults), its group's or its own, with the reference's defaults filled in
 * (docs/api.md "Check statuses and alerts").
 */
import type { Static } from 'typebox';
import { type AlertSettingsIn, DEFAULT_ALERT_SETTINGS } from '../checks/alert-settings-schema.ts';
import type { StoredCheckGroup } from '../store/check-group-types.ts';
import type { StoredCheck } from '../store/store.ts';

type AlertSettingsBody = Static<typeof AlertSettingsIn>;

/** Every part of the settings resolved: what the state machine reads. */
export interface AlertSettings {
  escalationType: AlertSettingsBody['escalationType'];
  failedRunThreshold: number;
  minutesFailingThreshold: number;
  reminders: { amount: number; interval: number };
  /** Percentage of a check's locations that must fail; null when the threshold is off (any location fails it). */
  parallelFailurePercentage: number | null;
}

const DEFAULT_MINUTES_FAILING = 5;

/** Resolves a stored alertSettings body (validated on input by AlertSettingsIn) or null to full settings. */
export function resolveAlertSettings(body: Partial<AlertSettingsBody> | null | undefined): AlertSettings {
  const d = DEFAULT_ALERT_SETTINGS;
  const parallel = body?.parallelRunFailureThreshold;
  return {
    escalationType: body?.escalationType ?? d.escalationType,
    failedRunThreshold: body?.runBasedEscalation?.failedRunThreshold ?? d.runBasedEscalation.failedRunThreshold,
    minutesFailingThreshold: body?.timeBasedEscalation?.minutesFailingThreshold ?? DEFAULT_MINUTES_FAILING,
    reminders: {
      amount: body?.reminders?.amount ?? d.reminders.amount,
      interval: body?.reminders?.interval ?? d.reminders.interval,
    },
    parallelFailurePercentage: parallel?.enabled
      ? (parallel.percentage ?? d.parallelRunFailureThreshold.percentage)
      : null,
  };
}

/**
 * The settings that govern `check`, as the reference decides: a group that defers to the account
 * (useGlobalAlertSettings true) gives its checks the account's, i.e. the defaults; a group with
 * settings of its own overrides its checks'; otherwise a check uses its own only when it does not
 * defer to the account (useGlobalAlertSettings false; true is the reference's default).
 */
export function effectiveAlertSettings(
  check: Pick<StoredCheck, 'body'>,
  group: Pick<StoredCheckGroup, 'body'> | undefined,
): AlertSettings {
  if (group?.body.useGlobalAlertSettings === true) return resolveAlertSettings(null);
  if (group?.body.alertSettings) return resolveAlertSettings(group.body.alertSettings as Partial<AlertSettingsBody>);
  if (check.body.useGlobalAlertSettings !== false) return resolveAlertSettings(null);
  return resolveAlertSettings(check.body.alertSettings as Partial<AlertSettingsBody> | null | undefined);
}
