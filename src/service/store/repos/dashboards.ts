import { randomBytes } from 'node:crypto';
import { ConflictError } from '../../http/errors.ts';
import type {
  DashboardInput,
  DashboardKeyRecord,
  DashboardRepo,
  StoredDashboard,
} from '../heartbeat-dashboard-types.ts';
import { isUniqueViolation, nowIso, type SqlDatabase } from '../sql/database.ts';
import { hashKey } from './keys.ts';
import { type KeyTable, storeKey } from './stored-keys.ts';

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

const VIEWER_KEYS: KeyTable = { table: 'dashboard_keys', owner: 'dashboard_id' };

/** The prefix the reference's dashboard keys carry. */
export const DASHBOARD_KEY_PREFIX = 'da_';

/**
 * Which unique index a constraint error came from. SQLite's message names the column ("UNIQUE
 * constraint failed: dashboards.custom_url_key"), PostgreSQL's the constraint named after it
 * ("dashboards_custom_url_key_key"); the column names the property that is taken.
 */
function conflictFor(err: unknown): ConflictError | undefined {
  if (!isUniqueViolation(err)) return undefined;
  const message = (err as Error).message;
  if (message.includes('custom_url_key'))
    return new ConflictError('body/customUrl is already in use by another dashboard');
  if (message.includes('custom_domain_key'))
    return new ConflictError('body/customDomain is already in use by another dashboard');
  return undefined;
}

export class SqlDashboardRepo implements DashboardRepo {
  readonly #db: SqlDatabase;
  constructor(db: SqlDatabase) {
    this.#db = db;
  }

  async create(accountId: string, input: DashboardInput): Promise<StoredDashboard> {
    const id = await this.#write(async () => {
      const row = await this.#db.get<{ id: number }>(
        'INSERT INTO dashboards (account_id, body, custom_url_key, custom_domain_key, created_at) VALUES (?, ?, ?, ?, ?) RETURNING id',
        [accountId, JSON.stringify(input.body), input.customUrlKey, input.customDomainKey, nowIso()],
      );
      const dashboardId = Number(row?.id);
      return { dashboardId, newKey: input.isPrivate ? await this.#addKey(dashboardId) : undefined };
    });
    return { ...(await this.#mustGet(accountId, id.dashboardId)), ...(id.newKey ? { newKey: id.newKey } : {}) };
  }

  async update(accountId: string, id: number, input: DashboardInput): Promise<StoredDashboard | undefined> {
    const changed = await this.#write(async () => {
      const result = await this.#db.run(
        'UPDATE dashboards SET body = ?, custom_url_key = ?, custom_domain_key = ?, updated_at = ? WHERE id = ? AND account_id = ?',
        [JSON.stringify(input.body), input.customUrlKey, input.customDomainKey, nowIso(), id, accountId],
      );
      if (result.changes === 0) return false;
      const hasKey = (await this.#db.get('SELECT 1 FROM dashboard_keys WHERE dashboard_id = ?', [id])) !== undefined;
      // A dashboard made private gets its key; made public, its keys are revoked (deleted).
      if (!input.isPrivate && hasKey) await this.#db.run('DELETE FROM dashboard_keys WHERE dashboard_id = ?', [id]);
      return { newKey: input.isPrivate && !hasKey ? await this.#addKey(id) : undefined };
    });
    if (!changed) return undefined;
    return { ...(await this.#mustGet(accountId, id)), ...(changed.newKey ? { newKey: changed.newKey } : {}) };
  }

  async get(accountId: string, id: number): Promise<StoredDashboard | undefined> {
    const row = await this.#db.get<DashboardRow>('SELECT * FROM dashboards WHERE id = ? AND account_id = ?', [
      id,
      accountId,
    ]);
    return row && this.#toDashboard(row);
  }

  async getByAddress(
    accountId: string,
    kind: 'customUrl' | 'customDomain',
    key: string,
  ): Promise<StoredDashboard | undefined> {
    const row = await this.#db.get<DashboardRow>(
      `SELECT * FROM dashboards WHERE ${addressColumn(kind)} = ? AND account_id = ?`,
      [key, accountId],
    );
    return row && this.#toDashboard(row);
  }

  async list(accountId: string, opts: { limit: number; page: number }): Promise<StoredDashboard[]> {
    const rows = await this.#db.all<DashboardRow>(
      'SELECT * FROM dashboards WHERE account_id = ? ORDER BY id LIMIT ? OFFSET ?',
      [accountId, opts.limit, (opts.page - 1) * opts.limit],
    );
    return Promise.all(rows.map((row) => this.#toDashboard(row)));
  }

  async findByAddress(kind: 'customUrl' | 'customDomain', key: string): Promise<StoredDashboard | undefined> {
    const row = await this.#db.get<DashboardRow>(`SELECT * FROM dashboards WHERE ${addressColumn(kind)} = ?`, [key]);
    return row && this.#toDashboard(row);
  }

  async hasViewerKey(dashboardId: number, rawKey: string): Promise<boolean> {
    return (
      (await this.#db.get('SELECT 1 FROM dashboard_keys WHERE dashboard_id = ? AND key_hash = ?', [
        dashboardId,
        hashKey(rawKey),
      ])) !== undefined
    );
  }

  async delete(accountId: string, id: number): Promise<boolean> {
    return (await this.#db.run('DELETE FROM dashboards WHERE id = ? AND account_id = ?', [id, accountId])).changes > 0;
  }

  async #write<T>(fn: () => Promise<T>): Promise<T> {
    try {
      return await this.#db.transaction(fn);
    } catch (err) {
      throw conflictFor(err) ?? err;
    }
  }

  /** Creates a viewer key. Only its hash is kept: the raw value goes back once, to the caller. */
  async #addKey(dashboardId: number): Promise<{ id: string; rawKey: string }> {
    const rawKey = DASHBOARD_KEY_PREFIX + randomBytes(16).toString('hex');
    const { id } = await storeKey(this.#db, VIEWER_KEYS, dashboardId, rawKey);
    return { id, rawKey };
  }

  async #toDashboard(row: DashboardRow): Promise<StoredDashboard> {
    const keys = await this.#db.all<KeyRow>('SELECT * FROM dashboard_keys WHERE dashboard_id = ? ORDER BY created_at', [
      row.id,
    ]);
    return {
      id: row.id,
      accountId: row.account_id,
      body: JSON.parse(row.body) as Record<string, unknown>,
      keys: keys.map(
        (k): DashboardKeyRecord => ({
          id: k.id,
          maskedKey: k.masked_key,
          createdAt: k.created_at,
          updatedAt: k.updated_at,
        }),
      ),
      createdAt: row.created_at,
      updatedAt: row.updated_at,
    };
  }

  async #mustGet(accountId: string, id: number): Promise<StoredDashboard> {
    const dashboard = await this.get(accountId, id);
    if (!dashboard) throw new Error(`dashboard ${id} vanished right after it was written`);
    return dashboard;
  }
}

const addressColumn = (kind: 'customUrl' | 'customDomain') =>
  kind === 'customUrl' ? 'custom_url_key' : 'custom_domain_key';
