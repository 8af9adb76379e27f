/**
 * The alert settings that apply to a check: its group's or its own (InternalAlertSettingsCreate),
 * with the reference's defaults filled in. The reference lets a group's settings override its
 * checks' (docs/api.md "Check statuses and alerts"): a group with alert settings of its own, not
 * deferring to the account (useGlobalAlertSettings), wins over its member checks.
 */
import type { Static } from 'typebox';
import { type AlertSettingsIn, DEFAULT_GROUP_ALERT_SETTINGS } from '../checks/check-group-schema.ts';
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
  const d = DEFAULT_GROUP_ALERT_SETTINGS;
  const parallel = body?.parallelRunFailureThreshold;
  return {
    escalationType: body?.escalationType ?? d.escalationType,
    failedRunThreshold: body?.runBasedEscalation?.failedRunThreshold ?? d.runBasedEscalation.failedRunThreshold,
    minutesFailingThreshold: body?.timeBasedEscalation?.minutesFailingThreshold ?? DEFAULT_MINUTES_FAILING,
    reminders: { amount: body?.reminders?.amount ?? d.reminders.amount, interval: body?.reminders?.interval ?? d.reminders.interval },
    parallelFailurePercentage: parallel?.enabled ? (parallel.percentage ?? d.parallelRunFailureThreshold.percentage) : null,
  };
}

/** The settings that govern `check`: the group's when it has its own, else the check's, else the defaults. */
export function effectiveAlertSettings(check: Pick<StoredCheck, 'body'>, group: Pick<StoredCheckGroup, 'body'> | undefined): AlertSettings {
  const groupSettings = group?.body.alertSettings;
  if (group && groupSettings && group.body.useGlobalAlertSettings !== true) {
    return resolveAlertSettings(groupSettings as Partial<AlertSettingsBody>);
  }
  return resolveAlertSettings(check.body.alertSettings as Partial<AlertSettingsBody> | null | undefined);
}
