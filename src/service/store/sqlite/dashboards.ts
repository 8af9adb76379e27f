import { randomBytes, randomUUID } from 'node:crypto';
import type { DatabaseSync } from 'node:sqlite';
import { ConflictError } from '../../http/errors.ts';
import type { DashboardInput, DashboardKeyRecord, DashboardRepo, StoredDashboard } from '../heartbeat-dashboard-types.ts';
import { inTransaction, isUniqueViolation, nowIso } from './db.ts';
import { hashKey, maskKey } from './keys.ts';

interface DashboardRow {
  id: number;
  account_id: string;
  body: string;
  created_at: string;
  updated_at: string | null;
}

interface KeyRow {
  id: string;
  dashboard_id: number;
  masked_key: string;
  created_at: string;
  updated_at: string | null;
}

/** The prefix the reference's dashboard keys carry. */
export const DASHBOARD_KEY_PREFIX = 'da_';

/**
 * Which unique index a constraint error came from. node:sqlite puts "UNIQUE constraint failed:
 * dashboards.custom_url_key" in the message; the column names the property that is taken.
 */
function conflictFor(err: unknown): ConflictError | undefined {
  if (!isUniqueViolation(err)) return undefined;
  const message = (err as Error).message;
  if (message.includes('custom_url_key')) return new ConflictError('body/customUrl is already in use by another dashboard');
  if (message.includes('custom_domain_key')) return new ConflictError('body/customDomain is already in use by another dashboard');
  return undefined;
}

export class SqliteDashboardRepo implements DashboardRepo {
  readonly #db: DatabaseSync;
  constructor(db: DatabaseSync) {
    this.#db = db;
  }

  async create(accountId: string, input: DashboardInput): Promise<StoredDashboard> {
    const id = this.#write(() => {
      const result = this.#db
        .prepare('INSERT INTO dashboards (account_id, body, custom_url_key, custom_domain_key, created_at) VALUES (?, ?, ?, ?, ?)')
        .run(accountId, JSON.stringify(input.body), input.customUrlKey, input.customDomainKey, nowIso());
      const dashboardId = Number(result.lastInsertRowid);
      return { dashboardId, newKey: input.isPrivate ? this.#addKey(dashboardId) : undefined };
    });
    return { ...this.#mustGet(accountId, id.dashboardId), ...(id.newKey ? { newKey: id.newKey } : {}) };
  }

  async update(accountId: string, id: number, input: DashboardInput): Promise<StoredDashboard | undefined> {
    const changed = this.#write(() => {
      const result = this.#db
        .prepare('UPDATE dashboards SET body = ?, custom_url_key = ?, custom_domain_key = ?, updated_at = ? WHERE id = ? AND account_id = ?')
        .run(JSON.stringify(input.body), input.customUrlKey, input.customDomainKey, nowIso(), id, accountId);
      if (result.changes === 0) return false;
      const hasKey = this.#db.prepare('SELECT 1 FROM dashboard_keys WHERE dashboard_id = ?').get(id) !== undefined;
      // A dashboard made private gets its key; made public, its keys are revoked (deleted).
      if (!input.isPrivate && hasKey) this.#db.prepare('DELETE FROM dashboard_keys WHERE dashboard_id = ?').run(id);
      return { newKey: input.isPrivate && !hasKey ? this.#addKey(id) : undefined };
    });
    if (!changed) return undefined;
    return { ...this.#mustGet(accountId, id), ...(changed.newKey ? { newKey: changed.newKey } : {}) };
  }

  async get(accountId: string, id: number): Promise<StoredDashboard | undefined> {
    const row = this.#db.prepare('SELECT * FROM dashboards WHERE id = ? AND account_id = ?').get(id, accountId) as DashboardRow | undefined;
    return row && this.#toDashboard(row);
  }

  async getByAddress(accountId: string, kind: 'customUrl' | 'customDomain', key: string): Promise<StoredDashboard | undefined> {
    const column = kind === 'customUrl' ? 'custom_url_key' : 'custom_domain_key';
    const row = this.#db.prepare(`SELECT * FROM dashboards WHERE ${column} = ? AND account_id = ?`).get(key, accountId) as
      | DashboardRow
      | undefined;
    return row && this.#toDashboard(row);
  }

  async list(accountId: string, opts: { limit: number; page: number }): Promise<StoredDashboard[]> {
    const rows = this.#db
      .prepare('SELECT * FROM dashboards WHERE account_id = ? ORDER BY id LIMIT ? OFFSET ?')
      .all(accountId, opts.limit, (opts.page - 1) * opts.limit) as unknown as DashboardRow[];
    return rows.map((row) => this.#toDashboard(row));
  }

  async findByAddress(kind: 'customUrl' | 'customDomain', key: string): Promise<StoredDashboard | undefined> {
    const column = kind === 'customUrl' ? 'custom_url_key' : 'custom_domain_key';
    const row = this.#db.prepare(`SELECT * FROM dashboards WHERE ${column} = ?`).get(key) as DashboardRow | undefined;
    return row && this.#toDashboard(row);
  }

  async hasViewerKey(dashboardId: number, rawKey: string): Promise<boolean> {
    return this.#db.prepare('SELECT 1 FROM dashboard_keys WHERE dashboard_id = ? AND key_hash = ?').get(dashboardId, hashKey(rawKey)) !== undefined;
  }

  async delete(accountId: string, id: number): Promise<boolean> {
    return this.#db.prepare('DELETE FROM dashboards WHERE id = ? AND account_id = ?').run(id, accountId).changes > 0;
  }

  #write<T>(fn: () => T): T {
    try {
      return inTransaction(this.#db, fn);
    } catch (err) {
      throw conflictFor(err) ?? err;
    }
  }

  /** Creates a viewer key. Only its hash is kept: the raw value goes back once, to the caller. */
  #addKey(dashboardId: number): { id: string; rawKey: string } {
    const rawKey = DASHBOARD_KEY_PREFIX + randomBytes(16).toString('hex');
    const id = randomUUID();
    this.#db
      .prepare('INSERT INTO dashboard_keys (id, dashboard_id, key_hash, masked_key, created_at) VALUES (?, ?, ?, ?, ?)')
      .run(id, dashboardId, hashKey(rawKey), maskKey(rawKey), nowIso());
    return { id, rawKey };
  }

  #toDashboard(row: DashboardRow): StoredDashboard {
    const keys = this.#db
      .prepare('SELECT * FROM dashboard_keys WHERE dashboard_id = ? ORDER BY created_at')
      .all(row.id) as unknown as KeyRow[];
    return {
      id: row.id,
      accountId: row.account_id,
      body: JSON.parse(row.body) as Record<string, unknown>,
      keys: keys.map(
        (k): DashboardKeyRecord => ({ id: k.id, maskedKey: k.masked_key, createdAt: k.created_at, updatedAt: k.updated_at }),
      ),
      createdAt: row.created_at,
      updatedAt: row.updated_at,
    };
  }

  #mustGet(accountId: string, id: number): StoredDashboard {
    const row = this.#db.prepare('SELECT * FROM dashboards WHERE id = ? AND account_id = ?').get(id, accountId) as DashboardRow | undefined;
    if (!row) throw new Error(`dashboard ${id} vanished right after it was written`);
    return this.#toDashboard(row);
  }
}
