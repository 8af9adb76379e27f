import type { SecretBox } from '../../secrets/box.ts';
import { parseStoredJson, storedJson } from '../../secrets/variables.ts';
import type {
  CheckGroupBody,
  CheckGroupInput,
  CheckGroupRepo,
  GroupTrigger,
  StoredCheckGroup,
} from '../check-group-types.ts';
import { type Dialect, nowIso, type SqlDatabase, type SqlValue } from '../sql/database.ts';
import { dialectSql } from '../sql/dialect-sql.ts';
import { insertLocationList, type LocationList, replaceLocationList } from './location-lists.ts';
import { type TriggerTable, TriggerTokens } from './trigger-tokens.ts';

interface GroupRow {
  id: number;
  account_id: string;
  name: string;
  activated: number;
  muted: number;
  concurrency: number;
  body: string;
  created_at: string;
  updated_at: string | null;
  location_ids: string | null;
}

interface TriggerRow {
  id: number;
  group_id: number;
  token: string;
  created_at: string;
  called_at: string | null;
  updated_at: string | null;
}

const LOCATIONS: LocationList = { table: 'check_group_locations', owner: 'group_id' };

// The locations joined in the order the user gave them.
const selectGroups = (dialect: Dialect) => `
  SELECT g.id, g.account_id, g.name, g.activated, g.muted, g.concurrency, g.body, g.created_at, g.updated_at,
         ${dialectSql(dialect).joinedList('location_id', 'check_group_locations WHERE group_id = g.id', 'position')} AS location_ids
  FROM check_groups g`;

// Secret variable values are sealed in the stored body (src/service/secrets/variables.ts).
const toGroup = (row: GroupRow, box: SecretBox): StoredCheckGroup => ({
  id: row.id,
  accountId: row.account_id,
  name: row.name,
  activated: row.activated === 1,
  muted: row.muted === 1,
  concurrency: row.concurrency,
  locationIds: row.location_ids ? row.location_ids.split(',') : [],
  body: parseStoredJson<CheckGroupBody>(box, row.body),
  createdAt: row.created_at,
  updatedAt: row.updated_at,
});

const toTrigger = (row: TriggerRow): GroupTrigger => ({
  id: row.id,
  groupId: row.group_id,
  token: row.token,
  createdAt: row.created_at,
  calledAt: row.called_at,
  updatedAt: row.updated_at,
});

/**
 * Checks of the group: the same expression as the checks_group index in migration 005 (which
 * PostgreSQL keeps as the member's text), so the index serves the query on both databases.
 */
export const memberWhere = (dialect: Dialect) =>
  `account_id = ? AND ${dialectSql(dialect).jsonText('body', 'groupId')} = ?`;

export class SqlCheckGroupRepo implements CheckGroupRepo {
  readonly #db: SqlDatabase;
  readonly #box: SecretBox;
  readonly #select: string;
  readonly #memberWhere: string;
  readonly #triggers: TriggerTokens<number, TriggerRow, GroupTrigger>;
  constructor(db: SqlDatabase, box: SecretBox) {
    this.#db = db;
    this.#box = box;
    this.#select = selectGroups(db.dialect);
    this.#memberWhere = memberWhere(db.dialect);
    const triggers: TriggerTable<number> = {
      table: 'check_group_triggers',
      target: 'group_id',
      describe: (id) => `check group ${id}`,
    };
    this.#triggers = new TriggerTokens(db, triggers, toTrigger);
  }

  async create(accountId: string, input: CheckGroupInput): Promise<StoredCheckGroup> {
    const id = await this.#db.transaction(async () => {
      const row = await this.#db.get<{ id: number }>(
        `INSERT INTO check_groups (account_id, name, activated, muted, concurrency, body, created_at)
         VALUES (?, ?, ?, ?, ?, ?, ?) RETURNING id`,
        [accountId, ...this.#columnValues(input)],
      );
      if (!row) throw new Error('inserting a check group returned no id');
      await insertLocationList(this.#db, LOCATIONS, row.id, input.locationIds);
      return row.id;
    });
    return this.#mustGet(accountId, id);
  }

  async update(accountId: string, id: number, input: CheckGroupInput): Promise<StoredCheckGroup | undefined> {
    const changed = await this.#db.transaction(async () => {
      const result = await this.#db.run(
        `UPDATE check_groups SET name = ?, activated = ?, muted = ?, concurrency = ?, body = ?, updated_at = ?
         WHERE id = ? AND account_id = ?`,
        [...this.#columnValues(input), id, accountId],
      );
      if (result.changes === 0) return false;
      await replaceLocationList(this.#db, LOCATIONS, id, input.locationIds);
      return true;
    });
    return changed ? this.#mustGet(accountId, id) : undefined;
  }

  /** name, activated, muted, concurrency, body and the time of the write: what create and update both set. */
  #columnValues(input: CheckGroupInput): Array<string | number> {
    return [
      input.name,
      input.activated ? 1 : 0,
      input.muted ? 1 : 0,
      input.concurrency,
      storedJson(this.#box, input.body),
      nowIso(),
    ];
  }

  async get(accountId: string, id: number): Promise<StoredCheckGroup | undefined> {
    const row = await this.#db.get<GroupRow>(`${this.#select} WHERE g.id = ? AND g.account_id = ?`, [id, accountId]);
    return row && toGroup(row, this.#box);
  }

  async list(
    accountId: string,
    opts: { limit: number; page: number; tags?: string[]; names?: string[] },
  ): Promise<StoredCheckGroup[]> {
    const { jsonArrayTable, jsonText } = dialectSql(this.#db.dialect);
    const where = ['g.account_id = $accountId'];
    const params: Record<string, SqlValue> = { accountId, limit: opts.limit, offset: (opts.page - 1) * opts.limit };
    if (opts.tags && opts.tags.length > 0) {
      params.tags = JSON.stringify(opts.tags);
      where.push(`EXISTS (SELECT 1 FROM ${jsonArrayTable(jsonText('g.body', 'tags'), 't')}
        WHERE t.value IN (SELECT v.value FROM ${jsonArrayTable('$tags', 'v')}))`);
    }
    if (opts.names && opts.names.length > 0) {
      params.names = JSON.stringify(opts.names);
      where.push(`g.name IN (SELECT v.value FROM ${jsonArrayTable('$names', 'v')})`);
    }
    const rows = await this.#db.all<GroupRow>(
      `${this.#select} WHERE ${where.join(' AND ')} ORDER BY g.id LIMIT $limit OFFSET $offset`,
      params,
    );
    return rows.map((r) => toGroup(r, this.#box));
  }

  async delete(accountId: string, id: number): Promise<'deleted' | 'not_found' | 'has_checks'> {
    return this.#db.transaction(async () => {
      const exists = await this.#db.get('SELECT 1 AS found FROM check_groups WHERE id = ? AND account_id = ?', [
        id,
        accountId,
      ]);
      if (!exists) return 'not_found';
      if (await this.#db.get(`SELECT 1 AS found FROM checks WHERE ${this.#memberWhere} LIMIT 1`, [accountId, id]))
        return 'has_checks';
      await this.#db.run('DELETE FROM check_groups WHERE id = ? AND account_id = ?', [id, accountId]);
      return 'deleted';
    });
  }

  async memberIds(accountId: string, groupId: number): Promise<string[]> {
    const order = dialectSql(this.#db.dialect).jsonNumber('body', 'groupOrder');
    const rows = await this.#db.all<{ id: string }>(
      `SELECT id FROM checks WHERE ${this.#memberWhere} ORDER BY ${order} IS NULL, ${order}, seq`,
      [accountId, groupId],
    );
    return rows.map((r) => r.id);
  }

  getTrigger(accountId: string, groupId: number): Promise<GroupTrigger | undefined> {
    return this.#triggers.get(accountId, groupId);
  }

  ensureTrigger(accountId: string, groupId: number): Promise<{ trigger: GroupTrigger; created: boolean }> {
    return this.#triggers.ensure(accountId, groupId);
  }

  deleteTrigger(accountId: string, groupId: number): Promise<boolean> {
    return this.#triggers.delete(accountId, groupId);
  }

  callTrigger(groupId: number, token: string, now: string): Promise<{ accountId: string } | undefined> {
    return this.#triggers.call(groupId, token, now);
  }

  async #mustGet(accountId: string, id: number): Promise<StoredCheckGroup> {
    const group = await this.get(accountId, id);
    if (!group) throw new Error(`check group ${id} vanished right after it was written`);
    return group;
  }
}
