import { randomUUID } from 'node:crypto';
import type { SqlDatabase } from '../sql/database.ts';
import type { CheckType } from '../../../shared/checks/types.ts';
import type { SecretBox } from '../../secrets/box.ts';
import { parseStoredJson, storedJson } from '../../secrets/variables.ts';
import type { CheckListFilter, CheckRepo, CheckSummary, StoredCheck } from '../store.ts';
import { type Dialect, nowIso, type SqlValue } from '../sql/database.ts';
import { dialectSql } from '../sql/dialect-sql.ts';
import { insertLocationList, type LocationList, replaceLocationList } from './location-lists.ts';

interface CheckRow {
  id: string;
  account_id: string;
  check_type: string;
  name: string;
  activated: number;
  muted: number;
  frequency: number;
  frequency_offset: number | null;
  body: string;
  created_at: string;
  updated_at: string | null;
  /** Comma-joined by group_concat, in assignment order. */
  location_ids: string | null;
}

type CheckInput = Omit<StoredCheck, 'id' | 'accountId' | 'createdAt' | 'updatedAt'>;

const LOCATIONS: LocationList = { table: 'check_locations', owner: 'check_id' };

// group_concat over an ordered subquery keeps the order the user gave the locations in.
const selectChecks = (dialect: Dialect) => `
  SELECT c.id, c.account_id, c.check_type, c.name, c.activated, c.muted, c.frequency, c.frequency_offset,
         c.body, c.created_at, c.updated_at,
         ${dialectSql(dialect).joinedList('location_id', 'check_locations WHERE check_id = c.id', 'position')} AS location_ids
  FROM checks c`;

/**
 * Checks by id (a JSON array), by the primary key: on the account's index SQLite's planner would read
 * every check of the account for each batch of results (test/service/run-queue-plans.test.ts).
 */
export function getManyChecks(dialect: Dialect): string {
  const { jsonArrayValues, noIndex } = dialectSql(dialect);
  return `${selectChecks(dialect)} WHERE ${noIndex('c.account_id')} = ? AND c.id IN (${jsonArrayValues('?')})`;
}

// Secret variable values are sealed in the stored body (src/service/secrets/variables.ts).
const toCheck = (row: CheckRow, box: SecretBox): StoredCheck => ({
  id: row.id,
  accountId: row.account_id,
  checkType: row.check_type as CheckType,
  name: row.name,
  activated: row.activated === 1,
  muted: row.muted === 1,
  frequency: row.frequency,
  frequencyOffset: row.frequency_offset,
  locationIds: row.location_ids ? row.location_ids.split(',') : [],
  body: parseStoredJson<Record<string, unknown>>(box, row.body),
  createdAt: row.created_at,
  updatedAt: row.updated_at,
});

/** A LIKE pattern matching `text` anywhere, its wildcards escaped (with ESCAPE '\\'). */
const containing = (text: string) => `%${text.toLowerCase().replace(/[\\%_]/g, (m) => `\\${m}`)}%`;

const FAILING = '(s.has_failures = 1 OR s.has_errors = 1)';
const STATUS_SQL = {
  failing: FAILING,
  degraded: `(NOT ${FAILING} AND s.is_degraded = 1)`,
  passing: `(NOT ${FAILING} AND s.is_degraded = 0)`,
} as const;

/** The AND clauses of a check list's filters, after `c.account_id = ?`, with their parameters in order. */
function filterSql(dialect: Dialect, filter: CheckListFilter): { where: string; params: SqlValue[] } {
  const { jsonText, jsonArrayTable, jsonArrayValues } = dialectSql(dialect);
  const clauses: string[] = [];
  const params: SqlValue[] = [];
  if (filter.checkType) {
    clauses.push('c.check_type = ?');
    params.push(filter.checkType);
  }
  if (filter.tags && filter.tags.length > 0) {
    clauses.push(
      `EXISTS (SELECT 1 FROM ${jsonArrayTable(`COALESCE(${jsonText('c.body', 'tags')}, '[]')`, 't')} WHERE t.value IN (${jsonArrayValues('?')}))`,
    );
    params.push(JSON.stringify(filter.tags));
  }
  if (filter.search !== undefined && filter.search !== '') {
    clauses.push("lower(c.name) LIKE ? ESCAPE '\\'");
    params.push(containing(filter.search));
  }
  if (filter.urlContains !== undefined) {
    clauses.push(
      `c.check_type = 'API' AND lower(${jsonText(jsonText('c.body', 'request'), 'url')}) LIKE ? ESCAPE '\\'`,
    );
    params.push(containing(filter.urlContains));
  }
  if (filter.status) {
    clauses.push(`EXISTS (SELECT 1 FROM check_statuses s WHERE s.check_id = c.id AND ${STATUS_SQL[filter.status]})`);
  }
  return { where: clauses.map((c) => ` AND ${c}`).join(''), params };
}

interface SummaryRow {
  id: string;
  name: string;
  check_type: string;
  activated: number;
  tags: string | null;
  group_name: string | null;
  has_failures: number | null;
  has_errors: number | null;
  is_degraded: number | null;
  last_run_location: string | null;
  last_check_run_id: string | null;
  updated_at: string | null;
}

const toSummary = (row: SummaryRow): CheckSummary => ({
  id: row.id,
  name: row.name,
  checkType: row.check_type as CheckSummary['checkType'],
  activated: row.activated === 1,
  tags: row.tags ? (JSON.parse(row.tags) as string[]) : [],
  groupName: row.group_name,
  lastRun: row.last_check_run_id
    ? {
        failed: row.has_failures === 1 || row.has_errors === 1,
        degraded: row.is_degraded === 1,
        location: row.last_run_location,
        resultId: row.last_check_run_id,
        at: row.updated_at,
      }
    : null,
});

export class SqlCheckRepo implements CheckRepo {
  readonly #db: SqlDatabase;
  readonly #box: SecretBox;
  readonly #select: string;
  readonly #getMany: string;
  constructor(db: SqlDatabase, box: SecretBox) {
    this.#db = db;
    this.#box = box;
    this.#select = selectChecks(db.dialect);
    this.#getMany = getManyChecks(db.dialect);
  }

  async create(check: Omit<StoredCheck, 'id' | 'createdAt' | 'updatedAt'>): Promise<StoredCheck> {
    const id = randomUUID();
    await this.#db.transaction(async () => {
      await this.#db.run(
        `INSERT INTO checks (id, account_id, check_type, name, activated, muted, frequency, frequency_offset, body, created_at)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
        [id, check.accountId, ...this.#settings(check), nowIso()],
      );
      await insertLocationList(this.#db, LOCATIONS, id, check.locationIds);
    });
    return this.#mustGet(check.accountId, id);
  }

  async update(accountId: string, id: string, check: CheckInput): Promise<StoredCheck | undefined> {
    const changed = await this.#db.transaction(async () => {
      const result = await this.#db.run(
        `UPDATE checks SET check_type = ?, name = ?, activated = ?, muted = ?, frequency = ?, frequency_offset = ?,
           body = ?, updated_at = ? WHERE id = ? AND account_id = ?`,
        [...this.#settings(check), nowIso(), id, accountId],
      );
      if (result.changes === 0) return false;
      await replaceLocationList(this.#db, LOCATIONS, id, check.locationIds);
      return true;
    });
    return changed ? this.#mustGet(accountId, id) : undefined;
  }

  async get(accountId: string, id: string): Promise<StoredCheck | undefined> {
    const row = (await this.#db.get(`${this.#select} WHERE c.id = ? AND c.account_id = ?`, [id, accountId])) as
      | CheckRow
      | undefined;
    return row && toCheck(row, this.#box);
  }

  async getMany(accountId: string, ids: readonly string[]): Promise<Map<string, StoredCheck>> {
    if (ids.length === 0) return new Map();
    const rows = await this.#db.all<CheckRow>(this.#getMany, [accountId, JSON.stringify(ids)]);
    return new Map(rows.map((r) => [r.id, toCheck(r, this.#box)]));
  }

  async list(accountId: string, opts: { limit: number; page: number } & CheckListFilter): Promise<StoredCheck[]> {
    const { where, params } = filterSql(this.#db.dialect, opts);
    const rows = await this.#db.all<CheckRow>(
      `${this.#select} WHERE c.account_id = ?${where} ORDER BY c.seq LIMIT ? OFFSET ?`,
      [accountId, ...params, opts.limit, (opts.page - 1) * opts.limit],
    );
    return rows.map((r) => toCheck(r, this.#box));
  }

  async delete(accountId: string, id: string): Promise<boolean> {
    return (await this.#db.run('DELETE FROM checks WHERE id = ? AND account_id = ?', [id, accountId])).changes > 0;
  }

  async listSummaries(accountId: string): Promise<CheckSummary[]> {
    const { jsonText, jsonNumber } = dialectSql(this.#db.dialect);
    const rows = (await this.#db.all(
      `SELECT c.id, c.name, c.check_type, c.activated, ${jsonText('c.body', 'tags')} AS tags, g.name AS group_name,
                s.has_failures, s.has_errors, s.is_degraded, s.last_run_location, s.last_check_run_id, s.updated_at
         FROM checks c
         LEFT JOIN check_groups g ON g.id = ${jsonNumber('c.body', 'groupId')} AND g.account_id = c.account_id
         LEFT JOIN check_statuses s ON s.check_id = c.id
         WHERE c.account_id = ? ORDER BY c.seq`,
      [accountId],
    )) as unknown as SummaryRow[];
    return rows.map(toSummary);
  }

  async listSchedulable(): Promise<StoredCheck[]> {
    const { jsonText } = dialectSql(this.#db.dialect);
    // Heartbeats are pinged by the monitored job, never run by an agent: never schedule them.
    const rows = await this.#db.all<CheckRow>(`${this.#select} WHERE c.activated = 1 AND c.check_type <> 'HEARTBEAT'
        AND (EXISTS (SELECT 1 FROM check_locations cl WHERE cl.check_id = c.id) OR ${jsonText('c.body', 'groupId')} IS NOT NULL)
        ORDER BY c.seq`);
    return rows.map((r) => toCheck(r, this.#box));
  }

  /** check_type, name, activated, muted, frequency, frequency_offset and body, as both writes store them. */
  #settings(check: CheckInput): SqlValue[] {
    return [
      check.checkType,
      check.name,
      check.activated ? 1 : 0,
      check.muted ? 1 : 0,
      check.frequency,
      check.frequencyOffset,
      storedJson(this.#box, check.body),
    ];
  }

  async #mustGet(accountId: string, id: string): Promise<StoredCheck> {
    const row = (await this.#db.get(`${this.#select} WHERE c.id = ? AND c.account_id = ?`, [id, accountId])) as
      | CheckRow
      | undefined;
    if (!row) throw new Error(`check ${id} vanished right after it was written`);
    return toCheck(row, this.#box);
  }
}
