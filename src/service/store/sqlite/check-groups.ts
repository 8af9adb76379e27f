import { randomBytes } from 'node:crypto';
import type { DatabaseSync } from 'node:sqlite';
import type { SecretBox } from '../../secrets/box.ts';
import { parseStoredJson, storedJson } from '../../secrets/variables.ts';
import type { CheckGroupBody, CheckGroupInput, CheckGroupRepo, GroupTrigger, StoredCheckGroup } from '../check-group-types.ts';
import { inTransaction, nowIso } from './db.ts';

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

const SELECT = `
  SELECT g.id, g.account_id, g.name, g.activated, g.muted, g.concurrency, g.body, g.created_at, g.updated_at,
         (SELECT group_concat(location_id) FROM
            (SELECT location_id FROM check_group_locations WHERE group_id = g.id ORDER BY position)) AS location_ids
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

/** The same expression as the checks_group index in migration 005, so the index serves the query. */
export const MEMBER_WHERE = `account_id = ? AND json_extract(body, '$.groupId') = ?`;

export class SqliteCheckGroupRepo implements CheckGroupRepo {
  readonly #db: DatabaseSync;
  readonly #box: SecretBox;
  constructor(db: DatabaseSync, box: SecretBox) {
    this.#db = db;
    this.#box = box;
  }

  async create(accountId: string, input: CheckGroupInput): Promise<StoredCheckGroup> {
    const id = inTransaction(this.#db, () => {
      const row = this.#db
        .prepare(
          `INSERT INTO check_groups (account_id, name, activated, muted, concurrency, body, created_at)
           VALUES (?, ?, ?, ?, ?, ?, ?) RETURNING id`,
        )
        .get(accountId, input.name, input.activated ? 1 : 0, input.muted ? 1 : 0, input.concurrency, storedJson(this.#box, input.body), nowIso()) as {
        id: number;
      };
      this.#setLocations(row.id, input.locationIds);
      return row.id;
    });
    return this.#mustGet(accountId, id);
  }

  async update(accountId: string, id: number, input: CheckGroupInput): Promise<StoredCheckGroup | undefined> {
    const changed = inTransaction(this.#db, () => {
      const result = this.#db
        .prepare(
          `UPDATE check_groups SET name = ?, activated = ?, muted = ?, concurrency = ?, body = ?, updated_at = ?
           WHERE id = ? AND account_id = ?`,
        )
        .run(input.name, input.activated ? 1 : 0, input.muted ? 1 : 0, input.concurrency, storedJson(this.#box, input.body), nowIso(), id, accountId);
      if (result.changes === 0) return false;
      this.#db.prepare('DELETE FROM check_group_locations WHERE group_id = ?').run(id);
      this.#setLocations(id, input.locationIds);
      return true;
    });
    return changed ? this.#mustGet(accountId, id) : undefined;
  }

  async get(accountId: string, id: number): Promise<StoredCheckGroup | undefined> {
    const row = this.#db.prepare(`${SELECT} WHERE g.id = ? AND g.account_id = ?`).get(id, accountId) as GroupRow | undefined;
    return row && toGroup(row, this.#box);
  }

  async list(accountId: string, opts: { limit: number; page: number; tags?: string[]; names?: string[] }): Promise<StoredCheckGroup[]> {
    const where = ['g.account_id = $accountId'];
    if (opts.tags && opts.tags.length > 0) {
      where.push(`EXISTS (SELECT 1 FROM json_each(g.body, '$.tags') t WHERE t.value IN (SELECT value FROM json_each($tags)))`);
    }
    if (opts.names && opts.names.length > 0) where.push('g.name IN (SELECT value FROM json_each($names))');
    const rows = this.#db.prepare(`${SELECT} WHERE ${where.join(' AND ')} ORDER BY g.id LIMIT $limit OFFSET $offset`).all({
      accountId,
      limit: opts.limit,
      offset: (opts.page - 1) * opts.limit,
      ...(opts.tags && opts.tags.length > 0 ? { tags: JSON.stringify(opts.tags) } : {}),
      ...(opts.names && opts.names.length > 0 ? { names: JSON.stringify(opts.names) } : {}),
    }) as unknown as GroupRow[];
    return rows.map((r) => toGroup(r, this.#box));
  }

  async delete(accountId: string, id: number): Promise<'deleted' | 'not_found' | 'has_checks'> {
    return inTransaction(this.#db, () => {
      const exists = this.#db.prepare('SELECT 1 FROM check_groups WHERE id = ? AND account_id = ?').get(id, accountId);
      if (!exists) return 'not_found';
      if (this.#db.prepare(`SELECT 1 FROM checks WHERE ${MEMBER_WHERE} LIMIT 1`).get(accountId, id)) return 'has_checks';
      this.#db.prepare('DELETE FROM check_groups WHERE id = ? AND account_id = ?').run(id, accountId);
      return 'deleted';
    });
  }

  async memberIds(accountId: string, groupId: number): Promise<string[]> {
    const rows = this.#db
      .prepare(
        `SELECT id FROM checks WHERE ${MEMBER_WHERE}
         ORDER BY json_extract(body, '$.groupOrder') IS NULL, json_extract(body, '$.groupOrder'), seq`,
      )
      .all(accountId, groupId) as Array<{ id: string }>;
    return rows.map((r) => r.id);
  }

  async getTrigger(accountId: string, groupId: number): Promise<GroupTrigger | undefined> {
    const row = this.#db.prepare('SELECT * FROM check_group_triggers WHERE group_id = ? AND account_id = ?').get(groupId, accountId) as
      | TriggerRow
      | undefined;
    return row && toTrigger(row);
  }

  async ensureTrigger(accountId: string, groupId: number): Promise<{ trigger: GroupTrigger; created: boolean }> {
    return inTransaction(this.#db, () => {
      const existing = this.#db
        .prepare('SELECT * FROM check_group_triggers WHERE group_id = ? AND account_id = ?')
        .get(groupId, accountId) as TriggerRow | undefined;
      if (existing) return { trigger: toTrigger(existing), created: false };
      // 32 random bytes: the token alone authorizes running the group, like an API key.
      const token = randomBytes(32).toString('base64url');
      const row = this.#db
        .prepare('INSERT INTO check_group_triggers (group_id, account_id, token, created_at) VALUES (?, ?, ?, ?) RETURNING *')
        .get(groupId, accountId, token, nowIso()) as unknown as TriggerRow;
      return { trigger: toTrigger(row), created: true };
    });
  }

  async deleteTrigger(accountId: string, groupId: number): Promise<boolean> {
    return this.#db.prepare('DELETE FROM check_group_triggers WHERE group_id = ? AND account_id = ?').run(groupId, accountId).changes > 0;
  }

  async callTrigger(groupId: number, token: string, now: string): Promise<{ accountId: string } | undefined> {
    const row = this.#db
      .prepare('UPDATE check_group_triggers SET called_at = ? WHERE group_id = ? AND token = ? RETURNING account_id')
      .get(now, groupId, token) as { account_id: string } | undefined;
    return row && { accountId: row.account_id };
  }

  #setLocations(groupId: number, locationIds: readonly string[]): void {
    const insert = this.#db.prepare('INSERT INTO check_group_locations (group_id, location_id, position) VALUES (?, ?, ?)');
    for (const [position, locationId] of [...new Set(locationIds)].entries()) insert.run(groupId, locationId, position);
  }

  #mustGet(accountId: string, id: number): StoredCheckGroup {
    const row = this.#db.prepare(`${SELECT} WHERE g.id = ? AND g.account_id = ?`).get(id, accountId) as GroupRow | undefined;
    if (!row) throw new Error(`check group ${id} vanished right after it was written`);
    return toGroup(row, this.#box);
  }
}
