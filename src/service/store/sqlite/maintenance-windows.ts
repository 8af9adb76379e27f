/** Maintenance windows on SQLite. */
import type { DatabaseSync } from 'node:sqlite';
import type { MaintenanceWindow, MaintenanceWindowInput, MaintenanceWindowRepo, RepeatUnit } from '../maintenance-window-types.ts';
import { nowIso } from './db.ts';

interface WindowRow {
  id: number;
  account_id: string;
  name: string;
  tags: string;
  starts_at: string;
  ends_at: string;
  repeat_unit: RepeatUnit | null;
  repeat_interval: number | null;
  repeat_ends_at: string | null;
  description: string | null;
  pause_all_checks: number;
  silence_alerts_tags: string;
  silence_all_alerts: number;
  created_at: string;
  updated_at: string | null;
}

const toWindow = (row: WindowRow): MaintenanceWindow => ({
  id: row.id,
  accountId: row.account_id,
  name: row.name,
  tags: JSON.parse(row.tags) as string[],
  startsAt: row.starts_at,
  endsAt: row.ends_at,
  repeatUnit: row.repeat_unit,
  repeatInterval: row.repeat_interval,
  repeatEndsAt: row.repeat_ends_at,
  description: row.description,
  pauseAllChecks: row.pause_all_checks === 1,
  silenceAlertsTags: JSON.parse(row.silence_alerts_tags) as string[],
  silenceAllAlerts: row.silence_all_alerts === 1,
  createdAt: row.created_at,
  updatedAt: row.updated_at,
});

/** The stored columns of an input, in the order of COLUMNS. */
function values(input: MaintenanceWindowInput) {
  return [
    input.name,
    JSON.stringify(input.tags),
    input.startsAt,
    input.endsAt,
    input.repeatUnit,
    input.repeatInterval,
    input.repeatEndsAt,
    input.description,
    input.pauseAllChecks ? 1 : 0,
    JSON.stringify(input.silenceAlertsTags),
    input.silenceAllAlerts ? 1 : 0,
  ];
}

const COLUMNS = [
  'name',
  'tags',
  'starts_at',
  'ends_at',
  'repeat_unit',
  'repeat_interval',
  'repeat_ends_at',
  'description',
  'pause_all_checks',
  'silence_alerts_tags',
  'silence_all_alerts',
];

export class SqliteMaintenanceWindowRepo implements MaintenanceWindowRepo {
  readonly #db: DatabaseSync;
  constructor(db: DatabaseSync) {
    this.#db = db;
  }

  async list(accountId: string, opts: { limit: number; page: number }): Promise<MaintenanceWindow[]> {
    const rows = this.#db
      .prepare('SELECT * FROM maintenance_windows WHERE account_id = ? ORDER BY id LIMIT ? OFFSET ?')
      .all(accountId, opts.limit, (opts.page - 1) * opts.limit);
    return (rows as unknown as WindowRow[]).map(toWindow);
  }

  async listAll(accountId: string): Promise<MaintenanceWindow[]> {
    const rows = this.#db.prepare('SELECT * FROM maintenance_windows WHERE account_id = ? ORDER BY id').all(accountId);
    return (rows as unknown as WindowRow[]).map(toWindow);
  }

  async get(accountId: string, id: number): Promise<MaintenanceWindow | undefined> {
    const row = this.#db.prepare('SELECT * FROM maintenance_windows WHERE id = ? AND account_id = ?').get(id, accountId);
    return row ? toWindow(row as unknown as WindowRow) : undefined;
  }

  async create(accountId: string, input: MaintenanceWindowInput): Promise<MaintenanceWindow> {
    const placeholders = COLUMNS.map(() => '?').join(', ');
    const row = this.#db
      .prepare(`INSERT INTO maintenance_windows (account_id, ${COLUMNS.join(', ')}, created_at) VALUES (?, ${placeholders}, ?) RETURNING *`)
      .get(accountId, ...values(input), nowIso());
    return toWindow(row as unknown as WindowRow);
  }

  async update(accountId: string, id: number, input: MaintenanceWindowInput): Promise<MaintenanceWindow | undefined> {
    const sets = COLUMNS.map((c) => `${c} = ?`).join(', ');
    const row = this.#db
      .prepare(`UPDATE maintenance_windows SET ${sets}, updated_at = ? WHERE id = ? AND account_id = ? RETURNING *`)
      .get(...values(input), nowIso(), id, accountId);
    return row ? toWindow(row as unknown as WindowRow) : undefined;
  }

  async delete(accountId: string, id: number): Promise<boolean> {
    return this.#db.prepare('DELETE FROM maintenance_windows WHERE id = ? AND account_id = ?').run(id, accountId).changes > 0;
  }
}
