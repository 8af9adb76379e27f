/**
 * Keeps each check's status and alerting state as its results are stored: the dispatcher calls
 * `resultStored` once per newly stored result (and again for one a crash left unapplied, see
 * ./status-replay.ts), or with a batch's results. One read and one write of each check's status row, in
 * one store transaction per batch (CheckStatusRepo.applyResults), plus the alerts they raised: a state
 * change, a certificate expiry.
 *
 * The seams for notifications: an `onAlert` listener runs inside that transaction with each new
 * alert, so a notifier can enqueue its deliveries atomically with it; `onAlertsRaised` runs after
 * the commit, to wake whoever sends them.
 */
import type { RunResult } from '../../shared/protocol.ts';
import { effectivePlacement } from '../checks/group-merge.ts';
import { groupOf } from '../checks/group-of.ts';
import type {
  AlertType,
  CheckAlertRecord,
  CheckStatusRecord,
  NewCheckAlert,
  StatusApplication,
  StatusUpdate,
  WithAlert,
} from '../store/check-status-types.ts';
import type { Run, Store, StoredCheck } from '../store/store.ts';
import { type AlertSettings, effectiveAlertSettings } from './alert-settings.ts';
import { sslMonitorCertificate, sslStep } from './ssl-expiry.ts';
import { type AlertState, type CountedResult, counts, INITIAL_STATE, nextReminderAtMs, step } from './state-machine.ts';

/** A result just stored, with what the dispatcher knows of it. */
export interface StoredResultEvent {
  run: Pick<Run, 'accountId' | 'checkId' | 'dueAt' | 'locationId' | 'checkType'>;
  check: StoredCheck;
  resultId: string;
  resultType: 'FINAL' | 'ATTEMPT';
  runLocation: string;
  result: RunResult;
  atMs: number;
}

export interface CheckStatusServiceOptions {
  store: Pick<Store, 'checkStatuses' | 'checkGroups'>;
  /** Runs inside the transaction that records an alert (database work only: see WithAlert). */
  onAlert?: WithAlert;
  /** Runs after the transaction committed, with the alerts it recorded (none: not called). */
  onAlertsRaised?: (alerts: CheckAlertRecord[]) => void;
}

/**
 * Whether a stored result moves its check's status: FINAL and not cancelled. The dispatcher marks
 * exactly these pending when it stores them.
 */
export function appliesToStatus(resultType: 'FINAL' | 'ATTEMPT', result: Pick<RunResult, 'isCancelled'>): boolean {
  return resultType === 'FINAL' && !result.isCancelled;
}

export class CheckStatusService {
  readonly #store: CheckStatusServiceOptions['store'];
  readonly #onAlert: CheckStatusServiceOptions['onAlert'];
  readonly #onAlertsRaised: CheckStatusServiceOptions['onAlertsRaised'];

  constructor(opts: CheckStatusServiceOptions) {
    this.#store = opts.store;
    this.#onAlert = opts.onAlert;
    this.#onAlertsRaised = opts.onAlertsRaised;
  }

  /**
   * Applies a stored result pending its status update; returns the alerts it raised. ATTEMPT and
   * cancelled results are skipped, and so is a result applied already (by a replay or a replica).
   */
  async resultStored(e: StoredResultEvent): Promise<CheckAlertRecord[]> {
    return this.resultsStored([e]);
  }

  /**
   * Applies several stored results in one transaction (one commit and one read of the statuses
   * instead of one each), each as resultStored would, in the order given per check; all or none.
   * Sorted by check, so two batches on PostgreSQL clear pending marks and lock checks in one order.
   */
  async resultsStored(events: readonly StoredResultEvent[]): Promise<CheckAlertRecord[]> {
    const ordered = [...events].sort((a, b) =>
      a.run.checkId < b.run.checkId ? -1 : a.run.checkId > b.run.checkId ? 1 : 0,
    );
    const items: StatusApplication[] = [];
    for (const e of ordered) if (appliesToStatus(e.resultType, e.result)) items.push(await this.#applicationOf(e));
    if (items.length === 0) return [];
    const applied = await this.#store.checkStatuses.applyResults(items, this.#onAlert);
    const alerts = applied.flatMap((a) => a?.alerts ?? []);
    if (alerts.length > 0) this.#onAlertsRaised?.(alerts);
    return alerts;
  }

  /** What applying `e` takes: the check's effective alert settings and locations (its group's, if any). */
  async #applicationOf(e: StoredResultEvent): Promise<StatusApplication> {
    const group = await groupOf(this.#store, e.check);
    const settings = effectiveAlertSettings(e.check, group);
    const locationIds = effectivePlacement(e.check, group).locationIds;
    return {
      accountId: e.run.accountId,
      checkId: e.run.checkId,
      resultId: e.resultId,
      at: new Date(e.atMs).toISOString(),
      compute: (prev) => nextStatus(prev, e, settings, locationIds),
    };
  }
}

/** The next status row and the alerts (if any) for one result: pure, run inside the store's transaction. */
export function nextStatus(
  prev: CheckStatusRecord | undefined,
  e: StoredResultEvent,
  settings: AlertSettings,
  locationIds: readonly string[],
): StatusUpdate {
  const r = e.result;
  const counted: CountedResult = {
    resultType: e.resultType,
    locationId: e.run.locationId,
    runKey: e.run.dueAt,
    hasFailures: r.hasFailures,
    hasErrors: r.hasErrors,
    isDegraded: r.isDegraded,
    isCancelled: r.isCancelled,
    atMs: e.atMs,
  };
  const prevAlert: AlertState = prev?.alert ?? INITIAL_STATE;
  const { next, alert } = step(prevAlert, counted, settings, locationIds);
  // An infrastructure error is shown (hasErrors) but leaves what the check's own runs showed alone.
  const measured = counts(counted);
  // An API check's https certificate, or an SSL monitor's leaf: both feed the expiry alert.
  const tls = r.apiCheckResult?.response?.tls ?? sslMonitorCertificate(r.details?.sslCheckResult);
  const ssl = measured ? sslStep(next.sslAlerted, tls, e.atMs) : { alertDays: null, next: next.sslAlerted ?? null };
  const state: AlertState = { ...next, sslAlerted: ssl.next };
  const status: StatusUpdate['status'] = {
    hasFailures: measured ? r.hasFailures : (prev?.hasFailures ?? false),
    hasErrors: r.hasErrors,
    isDegraded: measured ? r.isDegraded : (prev?.isDegraded ?? false),
    longestRun: measured ? Math.max(prev?.longestRun ?? r.responseTime, r.responseTime) : (prev?.longestRun ?? null),
    shortestRun: measured ? Math.min(prev?.shortestRun ?? r.responseTime, r.responseTime) : (prev?.shortestRun ?? null),
    lastRunLocation: e.runLocation,
    lastCheckRunId: e.resultId,
    sslDaysRemaining: tls?.daysRemaining ?? prev?.sslDaysRemaining ?? null,
    alert: state,
  };
  const alerts: NewCheckAlert[] = [];
  if (alert) alerts.push(alertOf(e, alert, next.state === 'PASSING' ? e.atMs : (next.failingSinceMs ?? e.atMs), null));
  if (ssl.alertDays !== null) alerts.push(alertOf(e, 'ALERT_SSL', e.atMs, ssl.alertDays));
  const dueMs = nextReminderAtMs(state, settings);
  return { status, alerts, nextReminderAt: dueMs === null ? null : new Date(dueMs).toISOString() };
}

/** The history entry of an alert: the result that caused it, and when its episode began. */
function alertOf(
  e: StoredResultEvent,
  alertType: AlertType,
  startedAtMs: number,
  sslDaysRemaining: number | null,
): NewCheckAlert {
  const r = e.result;
  return {
    name: e.check.name,
    checkType: e.check.checkType,
    alertType,
    runLocation: e.runLocation,
    responseTime: r.responseTime,
    error: r.error,
    statusCode: r.apiCheckResult?.response ? String(r.apiCheckResult.response.status) : null,
    resultId: e.resultId,
    startedAt: new Date(startedAtMs).toISOString(),
    sslDaysRemaining,
  };
}
