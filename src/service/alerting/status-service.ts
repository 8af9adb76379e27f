/**
 * Keeps each check's status and alerting state as its results are stored: the dispatcher calls
 * `resultStored` once per newly stored result. One read and one write of the check's status row,
 * in one store transaction (CheckStatusRepo.applyResult), plus the alert row when the state changes.
 *
 * The seam for notifications: an `onAlert` listener runs inside that transaction with the new alert,
 * so a notifier can enqueue its deliveries atomically with the alert that caused them.
 */
import type { RunResult } from '../../shared/protocol.ts';
import { effectivePlacement } from '../checks/group-merge.ts';
import { groupOf } from '../checks/group-of.ts';
import type { CheckAlertRecord, CheckStatusRecord, StatusUpdate } from '../store/check-status-types.ts';
import type { Run, Store, StoredCheck } from '../store/store.ts';
import { type AlertSettings, effectiveAlertSettings } from './alert-settings.ts';
import { type AlertState, type CountedResult, counts, INITIAL_STATE, step, type TransitionAlertType } from './state-machine.ts';

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
  /** Runs inside the transaction that records an alert (synchronous: no await may split it). */
  onAlert?: (alert: CheckAlertRecord) => void;
}

export class CheckStatusService {
  readonly #store: CheckStatusServiceOptions['store'];
  readonly #onAlert: CheckStatusServiceOptions['onAlert'];

  constructor(opts: CheckStatusServiceOptions) {
    this.#store = opts.store;
    this.#onAlert = opts.onAlert;
  }

  /** Applies a stored result; returns the alert it raised, if any. ATTEMPT and cancelled results are skipped. */
  async resultStored(e: StoredResultEvent): Promise<CheckAlertRecord | null> {
    if (e.resultType !== 'FINAL' || e.result.isCancelled) return null;
    const group = await groupOf(this.#store, e.check);
    const settings = effectiveAlertSettings(e.check, group);
    const locationIds = effectivePlacement(e.check, group).locationIds;
    const applied = await this.#store.checkStatuses.applyResult(
      e.run.accountId,
      e.run.checkId,
      new Date(e.atMs).toISOString(),
      (prev) => nextStatus(prev, e, settings, locationIds),
      this.#onAlert,
    );
    return applied?.alert ?? null;
  }
}

/** The next status row and the alert (if any) for one result: pure, run inside the store's transaction. */
export function nextStatus(prev: CheckStatusRecord | undefined, e: StoredResultEvent, settings: AlertSettings, locationIds: readonly string[]): StatusUpdate {
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
  const status: StatusUpdate['status'] = {
    hasFailures: measured ? r.hasFailures : (prev?.hasFailures ?? false),
    hasErrors: r.hasErrors,
    isDegraded: measured ? r.isDegraded : (prev?.isDegraded ?? false),
    longestRun: measured ? Math.max(prev?.longestRun ?? r.responseTime, r.responseTime) : (prev?.longestRun ?? null),
    shortestRun: measured ? Math.min(prev?.shortestRun ?? r.responseTime, r.responseTime) : (prev?.shortestRun ?? null),
    lastRunLocation: e.runLocation,
    lastCheckRunId: e.resultId,
    sslDaysRemaining: r.apiCheckResult?.response?.tls?.daysRemaining ?? prev?.sslDaysRemaining ?? null,
    alert: next,
  };
  return { status, alert: alert ? alertOf(e, alert, next) : null };
}

/** The history entry of a transition: the result that caused it, and when its episode began. */
function alertOf(e: StoredResultEvent, alertType: TransitionAlertType, next: AlertState): NonNullable<StatusUpdate['alert']> {
  const r = e.result;
  const startedAtMs = next.state === 'PASSING' ? e.atMs : (next.failingSinceMs ?? e.atMs);
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
  };
}
