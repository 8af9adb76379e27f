/**
 * The reads behind status badges: from a check or group id alone (no API key), and only for accounts
 * whose settings turned badges on. Each is one query over checks, their group, their status and the
 * latest counted result's response time.
 */
import type { BadgeCheckState, BadgeRepo, BadgeSubject } from '../account-settings-types.ts';
import type { Dialect, SqlDatabase } from '../sql/database.ts';
import { memberWhere } from './check-groups.ts';
import { dialectSql } from '../sql/dialect-sql.ts';

interface StateRow {
  activated: number;
  has_result: number;
  has_failures: number | null;
  has_errors: number | null;
  is_degraded: number | null;
  response_time: number | null;
}

/**
 * Columns of StateRow over `c` (checks with `group_activated`), `s` (check_statuses) and results.
 * Flags are spelled as CASE, not as boolean expressions, so both databases answer 0 or 1.
 */
const stateColumns = (dialect: Dialect) => `
  CASE WHEN c.activated = 1 AND c.group_activated = 1 THEN 1 ELSE 0 END AS activated,
  CASE WHEN s.last_check_run_id IS NOT NULL THEN 1 ELSE 0 END AS has_result,
  s.has_failures, s.has_errors, s.is_degraded,
  (SELECT ${dialectSql(dialect).jsonNumber('r.payload', 'responseTime')} FROM results r WHERE r.id = s.last_check_run_id) AS response_time`;

/** A check's group id, from its body (null without one). */
const groupIdOf = (dialect: Dialect, body: string) => dialectSql(dialect).jsonNumber(body, 'groupId');

/** True when the account in `accountColumn` has badges on. */
const badgesOn = (accountColumn: string) =>
  `EXISTS (SELECT 1 FROM account_settings a WHERE a.account_id = ${accountColumn} AND a.badges_enabled = 1)`;

const toState = (row: StateRow): BadgeCheckState => ({
  activated: row.activated === 1,
  hasResult: row.has_result === 1,
  hasFailures: row.has_failures === 1,
  hasErrors: row.has_errors === 1,
  isDegraded: row.is_degraded === 1,
  responseTime: typeof row.response_time === 'number' ? row.response_time : null,
});

export class SqlBadgeRepo implements BadgeRepo {
  readonly #db: SqlDatabase;
  readonly #checkSql: string;
  readonly #membersSql: string;
  constructor(db: SqlDatabase) {
    this.#db = db;
    this.#checkSql = `SELECT c.name, ${stateColumns(db.dialect)}
      FROM (SELECT ch.*, COALESCE(g.activated, 1) AS group_activated FROM checks ch
            LEFT JOIN check_groups g ON g.id = ${groupIdOf(db.dialect, 'ch.body')} AND g.account_id = ch.account_id
            WHERE ch.id = ?) c
      LEFT JOIN check_statuses s ON s.check_id = c.id
      WHERE ${badgesOn('c.account_id')}`;
    this.#membersSql = `SELECT ${stateColumns(db.dialect)}
      FROM (SELECT id, activated, CAST(? AS INTEGER) AS group_activated FROM checks
            WHERE ${memberWhere(db.dialect)}) c
      LEFT JOIN check_statuses s ON s.check_id = c.id`;
  }

  async check(checkId: string): Promise<BadgeSubject | undefined> {
    const row = await this.#db.get<StateRow & { name: string }>(this.#checkSql, [checkId]);
    return row && { name: row.name, checks: [toState(row)] };
  }

  async group(groupId: number): Promise<BadgeSubject | undefined> {
    const group = await this.#db.get<{ account_id: string; name: string; activated: number }>(
      `SELECT account_id, name, activated FROM check_groups g WHERE id = ? AND ${badgesOn('g.account_id')}`,
      [groupId],
    );
    if (!group) return undefined;
    const rows = await this.#db.all<StateRow>(this.#membersSql, [group.activated, group.account_id, groupId]);
    return { name: group.name, checks: rows.map(toState) };
  }
}
