import type { DatabaseSync, StatementSync } from 'node:sqlite';
import type { AlertState } from '../../alerting/state-machine.ts';
import {
  type CheckAlertRecord,
  type CheckStatusRecord,
  type CheckStatusRepo,
  emptyCheckStatus,
  type NewCheckAlert,
  type ReminderUpdate,
  type StatusUpdate,
  type WithAlert,
} from '../check-status-types.ts';
import type { AccountChanges } from './account-changes.ts';
import { insertCheckAlert, lastEpisodeAlert } from './check-alerts.ts';
import { inTransaction } from './db.ts';

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

const SELECT = `SELECT s.*, c.name AS name FROM check_statuses s JOIN checks c ON c.id = s.check_id`;

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

export class SqliteCheckStatusRepo implements CheckStatusRepo {
  readonly #db: DatabaseSync;
  // Prepared once: this runs for every stored result, and compiling the SQL would cost more than running it.
  readonly #select: StatementSync;
  readonly #insert: StatementSync;
  readonly #update: StatementSync;
  readonly #applied: StatementSync;
  readonly #remind: StatementSync;

  readonly #changes: AccountChanges;

  constructor(db: DatabaseSync, changes: AccountChanges) {
    this.#db = db;
    this.#changes = changes;
    this.#select = db.prepare(`${SELECT} WHERE s.check_id = ? AND s.account_id = ?`);
    this.#insert = db.prepare(
      `INSERT INTO check_statuses (has_failures, has_errors, is_degraded, longest_run, shortest_run, last_run_location,
         last_check_run_id, ssl_days_remaining, alert_state, next_reminder_at, check_id, account_id, created_at, updated_at)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    );
    this.#update = db.prepare(
      `UPDATE check_statuses SET has_failures = ?, has_errors = ?, is_degraded = ?, longest_run = ?, shortest_run = ?,
         last_run_location = ?, last_check_run_id = ?, ssl_days_remaining = ?, alert_state = ?, next_reminder_at = ?, updated_at = ?
       WHERE check_id = ? AND account_id = ?`,
    );
    this.#applied = db.prepare('DELETE FROM results_status_pending WHERE result_id = ?');
    this.#remind = db.prepare('UPDATE check_statuses SET alert_state = ?, next_reminder_at = ? WHERE check_id = ? AND account_id = ?');
  }

  async applyResult(
    accountId: string,
    checkId: string,
    resultId: string,
    at: string,
    compute: (prev: CheckStatusRecord | undefined) => StatusUpdate | null,
    withAlert?: WithAlert,
  ): Promise<{ status: CheckStatusRecord; alerts: CheckAlertRecord[] } | null> {
    return inTransaction(this.#db, () => {
      // Whoever clears the pending mark applies the result: a replay racing the live path, or
      // another replica's, finds it cleared and changes nothing.
      if (this.#applied.run(resultId).changes === 0) return null;
      const prev = this.#read(accountId, checkId);
      const update = compute(prev);
      if (!update) return null;
      this.#write(accountId, checkId, at, update, prev === undefined);
      this.#changes.bump(accountId);
      const alerts = this.#insertAlerts(accountId, checkId, at, update.alerts, withAlert);
      const name = prev?.name ?? this.#read(accountId, checkId)?.name ?? '';
      const status: CheckStatusRecord = { ...update.status, accountId, checkId, name, createdAt: prev?.createdAt ?? at, updatedAt: at };
      return { status, alerts };
    });
  }

  async listRemindersDue(at: string, limit: number): Promise<Array<{ accountId: string; checkId: string }>> {
    const rows = this.#db
      .prepare('SELECT account_id, check_id FROM check_statuses WHERE next_reminder_at <= ? ORDER BY next_reminder_at LIMIT ?')
      .all(at, limit) as Array<{ account_id: string; check_id: string }>;
    return rows.map((r) => ({ accountId: r.account_id, checkId: r.check_id }));
  }

  async nextReminderDue(): Promise<string | null> {
    const row = this.#db.prepare('SELECT MIN(next_reminder_at) AS due FROM check_statuses WHERE next_reminder_at IS NOT NULL').get() as { due: string | null };
    return row.due;
  }

  async applyReminder(
    accountId: string,
    checkId: string,
    at: string,
    compute: (status: CheckStatusRecord, reminded: CheckAlertRecord | undefined) => ReminderUpdate,
    withAlert?: WithAlert,
  ): Promise<CheckAlertRecord | null> {
    return inTransaction(this.#db, () => {
      const status = this.#read(accountId, checkId);
      if (!status) return null;
      const update = compute(status, lastEpisodeAlert(this.#db, accountId, checkId));
      this.#remind.run(JSON.stringify(update.alert), update.nextReminderAt, checkId, accountId);
      return this.#insertAlerts(accountId, checkId, at, update.reminder ? [update.reminder] : [], withAlert)[0] ?? null;
    });
  }

  #insertAlerts(accountId: string, checkId: string, at: string, alerts: readonly NewCheckAlert[], withAlert: WithAlert | undefined): CheckAlertRecord[] {
    return alerts.map((a) => {
      const alert = insertCheckAlert(this.#db, { ...a, accountId, checkId, createdAt: at });
      withAlert?.(alert);
      return alert;
    });
  }

  async get(accountId: string, checkId: string): Promise<CheckStatusRecord | undefined> {
    return this.#read(accountId, checkId);
  }

  async list(accountId: string): Promise<CheckStatusRecord[]> {
    const rows = this.#db
      .prepare(
        `SELECT s.*, c.id AS id, c.account_id AS check_account_id, c.name AS name, c.created_at AS check_created_at
         FROM checks c LEFT JOIN check_statuses s ON s.check_id = c.id WHERE c.account_id = ? ORDER BY c.seq`,
      )
      .all(accountId) as unknown as Array<StatusRow & { id: string; check_account_id: string; check_created_at: string }>;
    return rows.map((row) =>
      row.alert_state === null
        ? emptyCheckStatus({ id: row.id, accountId: row.check_account_id, name: row.name, createdAt: row.check_created_at })
        : toStatus(row),
    );
  }

  #read(accountId: string, checkId: string): CheckStatusRecord | undefined {
    const row = this.#select.get(checkId, accountId) as StatusRow | undefined;
    return row ? toStatus(row) : undefined;
  }

  #write(accountId: string, checkId: string, at: string, { status: s, nextReminderAt }: StatusUpdate, isNew: boolean): void {
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
    if (isNew) this.#insert.run(...values, checkId, accountId, at, at);
    else this.#update.run(...values, at, checkId, accountId);
  }
}
