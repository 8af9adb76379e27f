import type { DatabaseSync, StatementSync } from 'node:sqlite';
import type { AlertState } from '../../alerting/state-machine.ts';
import { type CheckAlertRecord, type CheckStatusRecord, type CheckStatusRepo, emptyCheckStatus, type StatusUpdate } from '../check-status-types.ts';
import { insertCheckAlert } from './check-alerts.ts';
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

  constructor(db: DatabaseSync) {
    this.#db = db;
    this.#select = db.prepare(`${SELECT} WHERE s.check_id = ? AND s.account_id = ?`);
    this.#insert = db.prepare(
      `INSERT INTO check_statuses (has_failures, has_errors, is_degraded, longest_run, shortest_run, last_run_location,
         last_check_run_id, ssl_days_remaining, alert_state, check_id, account_id, created_at, updated_at)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    );
    this.#update = db.prepare(
      `UPDATE check_statuses SET has_failures = ?, has_errors = ?, is_degraded = ?, longest_run = ?, shortest_run = ?,
         last_run_location = ?, last_check_run_id = ?, ssl_days_remaining = ?, alert_state = ?, updated_at = ?
       WHERE check_id = ? AND account_id = ?`,
    );
  }

  async applyResult(
    accountId: string,
    checkId: string,
    at: string,
    compute: (prev: CheckStatusRecord | undefined) => StatusUpdate | null,
    withAlert?: (alert: CheckAlertRecord) => void,
  ): Promise<{ status: CheckStatusRecord; alert: CheckAlertRecord | null } | null> {
    return inTransaction(this.#db, () => {
      const prev = this.#read(accountId, checkId);
      const update = compute(prev);
      if (!update) return null;
      this.#write(accountId, checkId, at, update.status, prev === undefined);
      const alert = update.alert ? insertCheckAlert(this.#db, { ...update.alert, accountId, checkId, createdAt: at }) : null;
      if (alert) withAlert?.(alert);
      const name = prev?.name ?? this.#read(accountId, checkId)?.name ?? '';
      const status: CheckStatusRecord = { ...update.status, accountId, checkId, name, createdAt: prev?.createdAt ?? at, updatedAt: at };
      return { status, alert };
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

  #write(accountId: string, checkId: string, at: string, s: StatusUpdate['status'], isNew: boolean): void {
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
    ];
    if (isNew) this.#insert.run(...values, checkId, accountId, at, at);
    else this.#update.run(...values, at, checkId, accountId);
  }
}
