/**
 * Check statuses (one row per check: what its latest counted result showed, plus its alerting
 * state) and check alerts (the history of the state's transitions). See src/service/alerting/.
 */
import { type AlertState, INITIAL_STATE, type TransitionAlertType } from '../alerting/state-machine.ts';

/** What GET /v1/check-statuses shows of a check, plus the state machine's state. */
export interface CheckStatusRecord {
  checkId: string;
  accountId: string;
  name: string;
  hasFailures: boolean;
  hasErrors: boolean;
  isDegraded: boolean;
  longestRun: number | null;
  shortestRun: number | null;
  lastRunLocation: string | null;
  /** The id of the last result counted. */
  lastCheckRunId: string | null;
  sslDaysRemaining: number | null;
  alert: AlertState;
  createdAt: string;
  updatedAt: string | null;
}

/** The status of a check with no counted result yet: nothing failing, nothing measured. */
export function emptyCheckStatus(check: {
  id: string;
  accountId: string;
  name: string;
  createdAt: string;
}): CheckStatusRecord {
  return {
    checkId: check.id,
    accountId: check.accountId,
    name: check.name,
    hasFailures: false,
    hasErrors: false,
    isDegraded: false,
    longestRun: null,
    shortestRun: null,
    lastRunLocation: null,
    lastCheckRunId: null,
    sslDaysRemaining: null,
    alert: INITIAL_STATE,
    createdAt: check.createdAt,
    updatedAt: null,
  };
}

/**
 * Every alert a check's history can hold (the reference's CheckAlert alertType without NO_ALERT):
 * the state machine's transitions, the reminders of a standing alert (…_REMAIN) and certificate
 * expiry (ALERT_SSL).
 */
export type AlertType = TransitionAlertType | 'ALERT_FAILURE_REMAIN' | 'ALERT_DEGRADED_REMAIN' | 'ALERT_SSL';

/** One alert in a check's history. */
export interface CheckAlertRecord {
  id: number;
  accountId: string;
  checkId: string;
  name: string;
  checkType: string;
  alertType: AlertType;
  runLocation: string;
  responseTime: number;
  error: string | null;
  statusCode: string | null;
  resultId: string;
  /** When the failing (or degraded) episode began; the alert's own time for a recovery. */
  startedAt: string;
  /** The days left on the certificate, for ALERT_SSL; null for every other alert. */
  sslDaysRemaining: number | null;
  createdAt: string;
}

/** An alert as the alerting code computes it; the store adds the rest. */
export type NewCheckAlert = Omit<CheckAlertRecord, 'id' | 'accountId' | 'checkId' | 'createdAt'>;

/** What the caller computes from the previous status inside the store's transaction. */
export interface StatusUpdate {
  status: Omit<CheckStatusRecord, 'accountId' | 'checkId' | 'name' | 'createdAt' | 'updatedAt'>;
  /** What the result raised, in order: a transition alert and an SSL alert may come together. */
  alerts: NewCheckAlert[];
  /** When the standing alert's next reminder is due (ISO), null when none is. */
  nextReminderAt: string | null;
}

/** What a reminder sweep computes from a check's status inside the store's transaction. */
export interface ReminderUpdate {
  alert: AlertState;
  /** The reminder to record, or null when none is due (the status changed, or the settings did). */
  reminder: NewCheckAlert | null;
  nextReminderAt: string | null;
}

/**
 * Called inside the transaction with each alert it records, to write what must commit with it. On
 * PostgreSQL that transaction runs again after a serialization failure, so this must only touch the
 * database (through the store); anything else belongs after the commit.
 */
export type WithAlert = (alert: CheckAlertRecord) => void | Promise<void>;

/** One stored result for applyResults: applyResult's arguments but `withAlert`. */
export interface StatusApplication {
  accountId: string;
  checkId: string;
  resultId: string;
  at: string;
  compute: (prev: CheckStatusRecord | undefined) => StatusUpdate | null;
}

export interface CheckStatusRepo {
  /**
   * Reads the check's status, lets `compute` (synchronous, pure: it may run more than once) derive
   * the next one, and writes it with the alert it raised, in one transaction: results of two locations arriving together cannot
   * both read the same old state. `withAlert` runs inside that transaction too, so whatever must go
   * out with an alert (notification deliveries) commits or rolls back with it.
   *
   * The result `resultId` must still be pending (ResultRepo.insertOnce with pendingStatus): applying
   * it clears that mark in the same transaction, and a result no longer pending (applied already,
   * by this process or another replica) changes nothing and gives null.
   */
  applyResult(
    accountId: string,
    checkId: string,
    resultId: string,
    at: string,
    compute: (prev: CheckStatusRecord | undefined) => StatusUpdate | null,
    withAlert?: WithAlert,
  ): Promise<{ status: CheckStatusRecord; alerts: CheckAlertRecord[] } | null>;
  /**
   * applyResult for several results in one transaction, in the order given (results of one check
   * in the order they happened), with each check's status read once: one answer per item.
   */
  applyResults(
    items: readonly StatusApplication[],
    withAlert?: WithAlert,
  ): Promise<Array<{ status: CheckStatusRecord; alerts: CheckAlertRecord[] } | null>>;
  /** Checks whose next reminder is due at or before `at`, earliest first. */
  listRemindersDue(at: string, limit: number): Promise<Array<{ accountId: string; checkId: string }>>;
  /** When the earliest reminder of any check is due (ISO), or null when none is. */
  nextReminderDue(): Promise<string | null>;
  /**
   * Re-reads the check's status and the alert a reminder would remind of (the last one that began
   * its episode), lets `compute` decide, and writes the state, the next due time and the reminder in
   * one transaction: two replicas sweeping together cannot both send one reminder. Null when the
   * check has no status (deleted).
   */
  applyReminder(
    accountId: string,
    checkId: string,
    at: string,
    compute: (status: CheckStatusRecord, reminded: CheckAlertRecord | undefined) => ReminderUpdate,
    withAlert?: WithAlert,
  ): Promise<CheckAlertRecord | null>;
  get(accountId: string, checkId: string): Promise<CheckStatusRecord | undefined>;
  /** Every check of the account, in creation order; those without a counted result with an empty status. */
  list(accountId: string): Promise<CheckStatusRecord[]>;
}

export interface CheckAlertQuery {
  checkId?: string;
  /** Inclusive lower and exclusive upper bound of created_at, ISO strings. */
  from: string;
  to: string;
  limit: number;
  page: number;
}

export interface CheckAlertRepo {
  /** Newest first. */
  list(accountId: string, query: CheckAlertQuery): Promise<CheckAlertRecord[]>;
}
