/**
 * The alerting state of one check across all its locations, as a pure function of the previous
 * state, one stored result and the check's alert settings. No I/O and no clock of its own: the
 * caller passes the result's time, so tests drive TIME_BASED escalation with any clock.
 *
 * Only FINAL results count: a retry's ATTEMPT never moves the state. Neither does a cancelled run,
 * nor an infrastructure error (hasErrors without hasFailures: the agent could not start the check),
 * which says nothing about the monitored service.
 */
import type { AlertSettings } from './alert-settings.ts';
import type { SslAlerted } from './ssl-expiry.ts';

export type CheckState = 'PASSING' | 'DEGRADED' | 'FAILING';

/** The reference's CheckAlert alertType values that a state change produces. */
export type TransitionAlertType =
  | 'ALERT_FAILURE'
  | 'ALERT_DEGRADED'
  | 'ALERT_RECOVERY'
  | 'ALERT_DEGRADED_RECOVERY'
  | 'ALERT_DEGRADED_FAILURE'
  | 'ALERT_FAILURE_DEGRADED';

export interface AlertState {
  state: CheckState;
  /** The last counted outcome per location id. */
  locations: Record<string, CheckState>;
  /** Failed runs in a row; the results of one run at several locations count once. */
  consecutiveFailedRuns: number;
  /** The run (its due time) that last raised consecutiveFailedRuns. */
  lastFailedRun: string | null;
  /** When the current failing streak began (ms), for TIME_BASED escalation. */
  failingSinceMs: number | null;
  /** When the state last left PASSING (ms): reminders are timed from it. Null while passing. */
  alertedAtMs: number | null;
  /** Reminders sent for the current alert; the reminder sweep raises it, a transition resets it. */
  remindersSent: number;
  /** The certificates an ALERT_SSL was raised for today (./ssl-expiry.ts); absent in states stored before. */
  sslAlerted?: SslAlerted | null;
}

export interface CountedResult {
  resultType: 'FINAL' | 'ATTEMPT';
  locationId: string;
  /** Identifies the scheduled run (its due time): parallel results of one run share it. */
  runKey: string;
  hasFailures: boolean;
  hasErrors: boolean;
  isDegraded: boolean;
  isCancelled: boolean;
  atMs: number;
}

export interface Step {
  next: AlertState;
  /** The alert this result raises, or null: at most one per transition, never one per location. */
  alert: TransitionAlertType | null;
}

export const INITIAL_STATE: AlertState = {
  state: 'PASSING',
  locations: {},
  consecutiveFailedRuns: 0,
  lastFailedRun: null,
  failingSinceMs: null,
  alertedAtMs: null,
  remindersSent: 0,
  sslAlerted: null,
};

const TRANSITIONS: Record<CheckState, Partial<Record<CheckState, TransitionAlertType>>> = {
  PASSING: { FAILING: 'ALERT_FAILURE', DEGRADED: 'ALERT_DEGRADED' },
  DEGRADED: { FAILING: 'ALERT_DEGRADED_FAILURE', PASSING: 'ALERT_DEGRADED_RECOVERY' },
  FAILING: { PASSING: 'ALERT_RECOVERY', DEGRADED: 'ALERT_FAILURE_DEGRADED' },
};

/** Whether a result is one the state machine counts. */
export function counts(result: CountedResult): boolean {
  const infrastructureError = result.hasErrors && !result.hasFailures;
  return result.resultType === 'FINAL' && !result.isCancelled && !infrastructureError;
}

/** Applies one result; `locationIds` are the locations the check runs at now (others are forgotten). */
export function step(
  prev: AlertState,
  result: CountedResult,
  settings: AlertSettings,
  locationIds: readonly string[],
): Step {
  if (!counts(result)) return { next: prev, alert: null };
  const outcome: CheckState = result.hasFailures ? 'FAILING' : result.isDegraded ? 'DEGRADED' : 'PASSING';
  const locations = currentLocations(prev.locations, locationIds, result.locationId, outcome);
  const failing = isFailing(locations, locationIds.length, settings.parallelFailurePercentage);
  const streak = failing
    ? continueStreak(prev, result)
    : { consecutiveFailedRuns: 0, lastFailedRun: null, failingSinceMs: null };
  const escalated =
    failing &&
    escalationMet(streak.consecutiveFailedRuns, result.atMs - (streak.failingSinceMs ?? result.atMs), settings);
  const degraded = Object.values(locations).includes('DEGRADED');
  // A failure below its threshold keeps the state it had: it neither alerts nor recovers yet.
  const state: CheckState = failing ? (escalated ? 'FAILING' : prev.state) : degraded ? 'DEGRADED' : 'PASSING';
  const alert = TRANSITIONS[prev.state][state] ?? null;
  const alertedAtMs = state === 'PASSING' ? null : alert ? result.atMs : prev.alertedAtMs;
  return {
    next: { ...prev, state, locations, ...streak, alertedAtMs, remindersSent: alert ? 0 : prev.remindersSent },
    alert,
  };
}

function currentLocations(
  prev: Record<string, CheckState>,
  locationIds: readonly string[],
  locationId: string,
  outcome: CheckState,
): Record<string, CheckState> {
  const kept = Object.entries(prev).filter(([id]) => id !== locationId && locationIds.includes(id));
  return Object.fromEntries([...kept, [locationId, outcome]]);
}

/**
 * Without a parallel threshold any failing location fails the check; with one, at least that
 * percentage of the check's locations must be failing.
 */
function isFailing(locations: Record<string, CheckState>, locationCount: number, percentage: number | null): boolean {
  const failingCount = Object.values(locations).filter((s) => s === 'FAILING').length;
  if (failingCount === 0) return false;
  if (percentage === null) return true;
  return (failingCount * 100) / Math.max(locationCount, 1) >= percentage;
}

function continueStreak(
  prev: AlertState,
  result: CountedResult,
): Pick<AlertState, 'consecutiveFailedRuns' | 'lastFailedRun' | 'failingSinceMs'> {
  const newRun = prev.lastFailedRun !== result.runKey;
  return {
    consecutiveFailedRuns: prev.consecutiveFailedRuns + (newRun ? 1 : 0),
    lastFailedRun: result.runKey,
    failingSinceMs: prev.failingSinceMs ?? result.atMs,
  };
}

function escalationMet(failedRuns: number, failingForMs: number, settings: AlertSettings): boolean {
  if (settings.escalationType === 'TIME_BASED') return failingForMs >= settings.minutesFailingThreshold * 60_000;
  return failedRuns >= settings.failedRunThreshold;
}

/** When the next reminder of the current alert is due (ms), or null when none is (passing, or all sent). */
export function nextReminderAtMs(state: AlertState, settings: AlertSettings): number | null {
  if (state.state === 'PASSING' || state.alertedAtMs === null) return null;
  if (state.remindersSent >= settings.reminders.amount) return null;
  return state.alertedAtMs + (state.remindersSent + 1) * settings.reminders.interval * 60_000;
}

export interface ReminderStep {
  next: AlertState;
  /** Whether a reminder goes out now. */
  remind: boolean;
  nextReminderAtMs: number | null;
}

/**
 * The reminder due at `nowMs`, if any. When several came due meanwhile (the service was down) one
 * goes out and the missed ones count as sent: a reminder says "still failing", a burst says nothing more.
 */
export function reminderStep(state: AlertState, settings: AlertSettings, nowMs: number): ReminderStep {
  const due = nextReminderAtMs(state, settings);
  if (due === null || due > nowMs || state.alertedAtMs === null)
    return { next: state, remind: false, nextReminderAtMs: due };
  const dueByNow = Math.floor((nowMs - state.alertedAtMs) / (settings.reminders.interval * 60_000));
  const next = {
    ...state,
    remindersSent: Math.min(settings.reminders.amount, Math.max(state.remindersSent + 1, dueByNow)),
  };
  return { next, remind: true, nextReminderAtMs: nextReminderAtMs(next, settings) };
}
