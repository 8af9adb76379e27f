import type { SqlDatabase } from '../sql/database.ts';
import type { AlertType, CheckAlertQuery, CheckAlertRecord, CheckAlertRepo } from '../check-status-types.ts';

export interface AlertRow {
  id: number;
  account_id: string;
  check_id: string;
  name: string;
  check_type: string;
  alert_type: string;
  run_location: string;
  response_time: number;
  error: string | null;
  status_code: string | null;
  result_id: string;
  started_at: string;
  ssl_days_remaining: number | null;
  created_at: string;
}

export const toAlert = (row: AlertRow): CheckAlertRecord => ({
  id: row.id,
  accountId: row.account_id,
  checkId: row.check_id,
  name: row.name,
  checkType: row.check_type,
  alertType: row.alert_type as AlertType,
  runLocation: row.run_location,
  responseTime: row.response_time,
  error: row.error,
  statusCode: row.status_code,
  resultId: row.result_id,
  startedAt: row.started_at,
  sslDaysRemaining: row.ssl_days_remaining,
  createdAt: row.created_at,
});

/** The alerts that begin a failing or degraded episode: what a reminder reminds of. */
const EPISODE_ALERTS: readonly AlertType[] = [
  'ALERT_FAILURE',
  'ALERT_DEGRADED',
  'ALERT_DEGRADED_FAILURE',
  'ALERT_FAILURE_DEGRADED',
];

const LAST_EPISODE_ALERT = `SELECT * FROM check_alerts WHERE account_id = ? AND check_id = ? AND alert_type IN (${EPISODE_ALERTS.map(() => '?').join(', ')})
  ORDER BY id DESC LIMIT 1`;

const INSERT_ALERT = `INSERT INTO check_alerts (account_id, check_id, name, check_type, alert_type, run_location, response_time, error,
  status_code, result_id, started_at, ssl_days_remaining, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING id`;

/** The check's last alert that began an episode; called by the status repository inside its transaction. */
export async function lastEpisodeAlert(
  db: SqlDatabase,
  accountId: string,
  checkId: string,
): Promise<CheckAlertRecord | undefined> {
  const row = await db.get<AlertRow>(LAST_EPISODE_ALERT, [accountId, checkId, ...EPISODE_ALERTS]);
  return row ? toAlert(row) : undefined;
}

/** Inserts an alert; called by the status repository inside its transaction. */
export async function insertCheckAlert(db: SqlDatabase, a: Omit<CheckAlertRecord, 'id'>): Promise<CheckAlertRecord> {
  const row = await db.get<{ id: number }>(INSERT_ALERT, [
    a.accountId,
    a.checkId,
    a.name,
    a.checkType,
    a.alertType,
    a.runLocation,
    a.responseTime,
    a.error,
    a.statusCode,
    a.resultId,
    a.startedAt,
    a.sslDaysRemaining,
    a.createdAt,
  ]);
  if (!row) throw new Error('inserting a check alert returned no id');
  return { ...a, id: row.id };
}

export class SqlCheckAlertRepo implements CheckAlertRepo {
  readonly #db: SqlDatabase;
  constructor(db: SqlDatabase) {
    this.#db = db;
  }

  async list(accountId: string, q: CheckAlertQuery): Promise<CheckAlertRecord[]> {
    const byCheck = q.checkId !== undefined;
    const rows = await this.#db.all<AlertRow>(
      `SELECT * FROM check_alerts WHERE account_id = ? ${byCheck ? 'AND check_id = ?' : ''} AND created_at >= ? AND created_at < ?
       ORDER BY created_at DESC, id DESC LIMIT ? OFFSET ?`,
      [accountId, ...(byCheck ? [q.checkId as string] : []), q.from, q.to, q.limit, (q.page - 1) * q.limit],
    );
    return rows.map(toAlert);
  }
}
