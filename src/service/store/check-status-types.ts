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
export function emptyCheckStatus(check: { id: string; accountId: string; name: string; createdAt: string }): CheckStatusRecord {
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
  createdAt: string;
}

/** What the caller computes from the previous status inside the store's transaction. */
export interface StatusUpdate {
  status: Omit<CheckStatusRecord, 'accountId' | 'checkId' | 'name' | 'createdAt' | 'updatedAt'>;
  alert: Omit<CheckAlertRecord, 'id' | 'accountId' | 'checkId' | 'createdAt'> | null;
}

export interface CheckStatusRepo {
  /**
   * Reads the check's status, lets `compute` (synchronous, pure) derive the next one, and writes it
   * with the alert it raised, in one transaction: results of two locations arriving together cannot
   * both read the same old state. `withAlert` runs inside that transaction too, so whatever must go
   * out with an alert (notification deliveries) commits or rolls back with it.
   */
  applyResult(
    accountId: string,
    checkId: string,
    at: string,
    compute: (prev: CheckStatusRecord | undefined) => StatusUpdate | null,
    withAlert?: (alert: CheckAlertRecord) => void,
  ): Promise<{ status: CheckStatusRecord; alert: CheckAlertRecord | null } | null>;
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
