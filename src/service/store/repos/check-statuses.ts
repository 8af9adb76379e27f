import type { AlertState } from '../../alerting/state-machine.ts';
import {
  type CheckAlertRecord,
  type CheckStatusRecord,
  type CheckStatusRepo,
  emptyCheckStatus,
  type NewCheckAlert,
  type ReminderUpdate,
  type StatusApplication,
  type StatusUpdate,
  type WithAlert,
} from '../check-status-types.ts';
import { READ_COMMITTED, type SqlDatabase } from '../sql/database.ts';
import { dialectSql } from '../sql/dialect-sql.ts';
import type { AccountChanges } from './account-changes.ts';
import { insertCheckAlert, lastEpisodeAlert } from './check-alerts.ts';

interface StatusRow {
  check_id: string;
  account_id: string;
  name: string;
  has_failures: number;
  has_errors: number;
  is_degraded: number;
  longest_run: number | null;
  shortest_run: number | null;
  last_run_location: string | null;
  last_check_run_id: string | null;
  ssl_days_remaining: number | null;
  /** Null only in list()'s LEFT JOIN, for a check without a status row. */
  alert_state: string | null;
  created_at: string;
  updated_at: string | null;
}

/** Followed by the check id's condition: `= ?` for one, `IN (…)` for several (each row names its account). */
const SELECT_STATUSES =
  'SELECT s.*, c.name AS name FROM check_statuses s JOIN checks c ON c.id = s.check_id WHERE s.check_id';
const SELECT_STATUS = `${SELECT_STATUSES} = ? AND s.account_id = ?`;
const INSERT_STATUS = `INSERT INTO check_statuses (has_failures, has_errors, is_degraded, longest_run, shortest_run, last_run_location,
    last_check_run_id, ssl_days_remaining, alert_state, next_reminder_at, check_id, account_id, created_at, updated_at)
  VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
  ON CONFLICT (check_id) DO NOTHING`;
const UPDATE_STATUS = `UPDATE check_statuses SET has_failures = ?, has_errors = ?, is_degraded = ?, longest_run = ?, shortest_run = ?,
    last_run_location = ?, last_check_run_id = ?, ssl_days_remaining = ?, alert_state = ?, next_reminder_at = ?, updated_at = ?
  WHERE check_id = ? AND account_id = ?`;
const CLEAR_PENDING = 'DELETE FROM results_status_pending WHERE result_id = ?';
const REMIND = 'UPDATE check_statuses SET alert_state = ?, next_reminder_at = ? WHERE check_id = ? AND account_id = ?';

const toStatus = (row: StatusRow): CheckStatusRecord => ({
  checkId: row.check_id,
  accountId: row.account_id,
  name: row.name,
  hasFailures: row.has_failures === 1,
  hasErrors: row.has_errors === 1,
  isDegraded: row.is_degraded === 1,
  longestRun: row.longest_run,
  shortestRun: row.shortest_run,
  lastRunLocation: row.last_run_location,
  lastCheckRunId: row.last_check_run_id,
  sslDaysRemaining: row.ssl_days_remaining,
  alert: JSON.parse(row.alert_state ?? 'null') as AlertState,
  createdAt: row.created_at,
  updatedAt: row.updated_at,
});

/**
 * The state machine's transaction runs for every stored result: a handful of fixed statements (each
 * prepared once per connection by the database). On PostgreSQL it locks the check's row: two replicas
 * applying results of one check take turns, the second reading the first's status. Everything inside
 * it is database work; what must happen once (moving the dashboards' change count) happens after the
 * commit.
 */
export class SqlCheckStatusRepo implements CheckStatusRepo {
  readonly #db: SqlDatabase;
  readonly #changes: AccountChanges;
  readonly #sql: { lockChecks: string | null; selectStatuses: string };

  constructor(db: SqlDatabase, changes: AccountChanges) {
    this.#db = db;
    this.#changes = changes;
    const { forUpdate, jsonArrayValues } = dialectSql(db.dialect);
    this.#sql = {
      // SQLite's transactions take its single write lock up front: no row lock to take there.
      lockChecks: forUpdate
        ? `SELECT id FROM checks WHERE id IN (${jsonArrayValues('?')}) ORDER BY id ${forUpdate}`
        : null,
      selectStatuses: `${SELECT_STATUSES} IN (${jsonArrayValues('?')})`,
    };
  }

  async applyResult(
    accountId: string,
    checkId: string,
    resultId: string,
    at: string,
    compute: (prev: CheckStatusRecord | undefined) => StatusUpdate | null,
    withAlert?: WithAlert,
  ): Promise<{ status: CheckStatusRecord; alerts: CheckAlertRecord[] } | null> {
    const [applied] = await this.applyResults([{ accountId, checkId, resultId, at, compute }], withAlert);
    return applied ?? null;
  }

  async applyResults(
    items: readonly StatusApplication[],
    withAlert?: WithAlert,
  ): Promise<Array<{ status: CheckStatusRecord; alerts: CheckAlertRecord[] } | null>> {
    // Read committed with the checks' rows locked, rather than SERIALIZABLE, whose predicate locks are
    // coarser than one check: results of different checks applied at once by several replicas would
    // fail each other. The locks order the updates of one check; each statement then reads what the
    // one before it committed.
    const applied = await this.#db.transaction(async () => {
      // Whoever clears the pending mark applies the result: a replay racing the live path, or
      // another replica's, finds it cleared and changes nothing.
      const pending = new Set<StatusApplication>();
      for (const item of items) if ((await this.#db.run(CLEAR_PENDING, [item.resultId])).changes > 0) pending.add(item);
      const current = await this.#lockAndRead([...pending].map((item) => item.checkId));
      const out: Array<{ status: CheckStatusRecord; alerts: CheckAlertRecord[] } | null> = [];
      for (const item of items) out.push(pending.has(item) ? await this.#applyOne(item, current, withAlert) : null);
      return out;
    }, READ_COMMITTED);
    for (const a of applied) if (a) this.#changes.bump(a.status.accountId);
    return applied;
  }

  /** The statuses of `checkIds`, by check id, their checks' rows locked in id order on PostgreSQL. */
  async #lockAndRead(checkIds: readonly string[]): Promise<Map<string, CheckStatusRecord>> {
    if (checkIds.length === 0) return new Map();
    const ids = JSON.stringify([...new Set(checkIds)].sort());
    if (this.#sql.lockChecks) await this.#db.all(this.#sql.lockChecks, [ids]);
    const rows = await this.#db.all<StatusRow>(this.#sql.selectStatuses, [ids]);
    return new Map(rows.map((row) => [row.check_id, toStatus(row)]));
  }

  /** One pending result applied on the statuses read (`current`), which it then updates. */
  async #applyOne(
    { accountId, checkId, at, compute }: StatusApplication,
    current: Map<string, CheckStatusRecord>,
    withAlert: WithAlert | undefined,
  ): Promise<{ status: CheckStatusRecord; alerts: CheckAlertRecord[] } | null> {
    const read = current.get(checkId);
    const prev = read?.accountId === accountId ? read : undefined;
    const update = compute(prev);
    if (!update) return null;
    await this.#write(accountId, checkId, at, update, prev === undefined);
    const alerts = await this.#insertAlerts(accountId, checkId, at, update.alerts, withAlert);
    const name = prev?.name ?? (await this.#read(accountId, checkId))?.name ?? '';
    const status: CheckStatusRecord = {
      ...update.status,
      accountId,
      checkId,
      name,
      createdAt: prev?.createdAt ?? at,
      updatedAt: at,
    };
    current.set(checkId, status);
    return { status, alerts };
  }

  async listRemindersDue(at: string, limit: number): Promise<Array<{ accountId: string; checkId: string }>> {
    const rows = await this.#db.all<{ account_id: string; check_id: string }>(
      'SELECT account_id, check_id FROM check_statuses WHERE next_reminder_at <= ? ORDER BY next_reminder_at LIMIT ?',
      [at, limit],
    );
    return rows.map((r) => ({ accountId: r.account_id, checkId: r.check_id }));
  }

  async nextReminderDue(): Promise<string | null> {
    const row = await this.#db.get<{ due: string | null }>(
      'SELECT MIN(next_reminder_at) AS due FROM check_statuses WHERE next_reminder_at IS NOT NULL',
    );
    return row?.due ?? null;
  }

  async applyReminder(
    accountId: string,
    checkId: string,
    at: string,
    compute: (status: CheckStatusRecord, reminded: CheckAlertRecord | undefined) => ReminderUpdate,
    withAlert?: WithAlert,
  ): Promise<CheckAlertRecord | null> {
    return this.#db.transaction(async () => {
      const status = await this.#read(accountId, checkId);
      if (!status) return null;
      const update = compute(status, await lastEpisodeAlert(this.#db, accountId, checkId));
      await this.#db.run(REMIND, [JSON.stringify(update.alert), update.nextReminderAt, checkId, accountId]);
      const alerts = await this.#insertAlerts(
        accountId,
        checkId,
        at,
        update.reminder ? [update.reminder] : [],
        withAlert,
      );
      return alerts[0] ?? null;
    });
  }

  async #insertAlerts(
    accountId: string,
    checkId: string,
    at: string,
    alerts: readonly NewCheckAlert[],
    withAlert: WithAlert | undefined,
  ): Promise<CheckAlertRecord[]> {
    const recorded: CheckAlertRecord[] = [];
    for (const a of alerts) {
      const alert = await insertCheckAlert(this.#db, { ...a, accountId, checkId, createdAt: at });
      await withAlert?.(alert);
      recorded.push(alert);
    }
    return recorded;
  }

  async get(accountId: string, checkId: string): Promise<CheckStatusRecord | undefined> {
    return this.#read(accountId, checkId);
  }

  async list(accountId: string): Promise<CheckStatusRecord[]> {
    const rows = await this.#db.all<StatusRow & { id: string; check_account_id: string; check_created_at: string }>(
      `SELECT s.*, c.id AS id, c.account_id AS check_account_id, c.name AS name, c.created_at AS check_created_at
       FROM checks c LEFT JOIN check_statuses s ON s.check_id = c.id WHERE c.account_id = ? ORDER BY c.seq`,
      [accountId],
    );
    return rows.map((row) =>
      row.alert_state === null
        ? emptyCheckStatus({
            id: row.id,
            accountId: row.check_account_id,
            name: row.name,
            createdAt: row.check_created_at,
          })
        : toStatus(row),
    );
  }

  async #read(accountId: string, checkId: string): Promise<CheckStatusRecord | undefined> {
    const row = await this.#db.get<StatusRow>(SELECT_STATUS, [checkId, accountId]);
    return row ? toStatus(row) : undefined;
  }

  async #write(
    accountId: string,
    checkId: string,
    at: string,
    { status: s, nextReminderAt }: StatusUpdate,
    isNew: boolean,
  ): Promise<void> {
    const values = [
      s.hasFailures ? 1 : 0,
      s.hasErrors ? 1 : 0,
      s.isDegraded ? 1 : 0,
      s.longestRun,
      s.shortestRun,
      s.lastRunLocation,
      s.lastCheckRunId,
      s.sslDaysRemaining,
      JSON.stringify(s.alert),
      nextReminderAt,
    ];
    if (!isNew) {
      await this.#db.run(UPDATE_STATUS, [...values, at, checkId, accountId]);
      return;
    }
    // A row another transaction inserted after this one read none: on PostgreSQL, DO NOTHING meets it
    // as a serialization failure (this transaction runs again and reads it), where a plain INSERT
    // would fail as a duplicate key. SQLite's single writer never gets here.
    const { changes } = await this.#db.run(INSERT_STATUS, [...values, checkId, accountId, at, at]);
    if (changes === 0) throw new Error(`the status of check ${checkId} appeared while its transaction wrote it`);
  }
}
