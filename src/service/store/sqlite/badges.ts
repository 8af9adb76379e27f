/**
 * The reads behind status badges: from a check or group id alone (no API key), and only for accounts
 * whose settings turned badges on. Each is one query over checks, their group, their status and the
 * latest counted result's response time.
 */
import type { DatabaseSync } from 'node:sqlite';
import type { BadgeCheckState, BadgeRepo, BadgeSubject } from '../account-settings-types.ts';
import { MEMBER_WHERE } from './check-groups.ts';

interface StateRow {
  activated: number;
  has_result: number;
  has_failures: number | null;
  has_errors: number | null;
  is_degraded: number | null;
  response_time: number | null;
}

/** Columns of StateRow over `c` (checks with `group_activated`), `s` (check_statuses) and results. */
const STATE_COLUMNS = `
  c.activated AND c.group_activated AS activated,
  s.last_check_run_id IS NOT NULL AS has_result,
  s.has_failures, s.has_errors, s.is_degraded,
  (SELECT json_extract(r.payload, '$.responseTime') FROM results r WHERE r.id = s.last_check_run_id) AS response_time`;

/** True when the account in `accountColumn` has badges on. */
const badgesOn = (accountColumn: string) => `EXISTS (SELECT 1 FROM account_settings a WHERE a.account_id = ${accountColumn} AND a.badges_enabled = 1)`;

const toState = (row: StateRow): BadgeCheckState => ({
  activated: row.activated === 1,
  hasResult: row.has_result === 1,
  hasFailures: row.has_failures === 1,
  hasErrors: row.has_errors === 1,
  isDegraded: row.is_degraded === 1,
  responseTime: typeof row.response_time === 'number' ? row.response_time : null,
});

export class SqliteBadgeRepo implements BadgeRepo {
  readonly #db: DatabaseSync;
  constructor(db: DatabaseSync) {
    this.#db = db;
  }

  async check(checkId: string): Promise<BadgeSubject | undefined> {
    const row = this.#db
      .prepare(
        `SELECT c.name, ${STATE_COLUMNS}
         FROM (SELECT ch.*, COALESCE(g.activated, 1) AS group_activated FROM checks ch
               LEFT JOIN check_groups g ON g.id = json_extract(ch.body, '$.groupId') AND g.account_id = ch.account_id
               WHERE ch.id = ?) c
         LEFT JOIN check_statuses s ON s.check_id = c.id
         WHERE ${badgesOn('c.account_id')}`,
      )
      .get(checkId) as (StateRow & { name: string }) | undefined;
    return row && { name: row.name, checks: [toState(row)] };
  }

  async group(groupId: number): Promise<BadgeSubject | undefined> {
    const group = this.#db.prepare(`SELECT account_id, name, activated FROM check_groups g WHERE id = ? AND ${badgesOn('g.account_id')}`).get(groupId) as
      | { account_id: string; name: string; activated: number }
      | undefined;
    if (!group) return undefined;
    const rows = this.#db
      .prepare(
        `SELECT ${STATE_COLUMNS}
         FROM (SELECT id, activated, ? AS group_activated FROM checks WHERE ${MEMBER_WHERE}) c
         LEFT JOIN check_statuses s ON s.check_id = c.id`,
      )
      .all(group.activated, group.account_id, groupId) as unknown as StateRow[];
    return { name: group.name, checks: rows.map(toState) };
  }
}
