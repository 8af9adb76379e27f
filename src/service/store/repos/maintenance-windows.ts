/** Maintenance windows (migration 011). */
import type {
  MaintenanceWindow,
  MaintenanceWindowInput,
  MaintenanceWindowRepo,
  RepeatUnit,
} from '../maintenance-window-types.ts';
import { nowIso, type SqlDatabase } from '../sql/database.ts';
import { accountRow, accountRowsPage, deleteAccountRow } from './account-rows.ts';

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
function values(input: MaintenanceWindowInput): Array<string | number | null> {
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

const INSERT = `INSERT INTO maintenance_windows (account_id, ${COLUMNS.join(', ')}, created_at)
  VALUES (?, ${COLUMNS.map(() => '?').join(', ')}, ?) RETURNING *`;
const UPDATE = `UPDATE maintenance_windows SET ${COLUMNS.map((c) => `${c} = ?`).join(', ')}, updated_at = ?
  WHERE id = ? AND account_id = ? RETURNING *`;

export class SqlMaintenanceWindowRepo implements MaintenanceWindowRepo {
  readonly #db: SqlDatabase;
  constructor(db: SqlDatabase) {
    this.#db = db;
  }

  async list(accountId: string, opts: { limit: number; page: number }): Promise<MaintenanceWindow[]> {
    const rows = await accountRowsPage<WindowRow>(this.#db, 'maintenance_windows', accountId, opts);
    return rows.map(toWindow);
  }

  async listAll(accountId: string): Promise<MaintenanceWindow[]> {
    const rows = await this.#db.all<WindowRow>('SELECT * FROM maintenance_windows WHERE account_id = ? ORDER BY id', [
      accountId,
    ]);
    return rows.map(toWindow);
  }

  async get(accountId: string, id: number): Promise<MaintenanceWindow | undefined> {
    const row = await accountRow<WindowRow>(this.#db, 'maintenance_windows', accountId, id);
    return row ? toWindow(row) : undefined;
  }

  async create(accountId: string, input: MaintenanceWindowInput): Promise<MaintenanceWindow> {
    const row = await this.#db.get<WindowRow>(INSERT, [accountId, ...values(input), nowIso()]);
    if (!row) throw new Error('inserting a maintenance window returned no row');
    return toWindow(row);
  }

  async update(accountId: string, id: number, input: MaintenanceWindowInput): Promise<MaintenanceWindow | undefined> {
    const row = await this.#db.get<WindowRow>(UPDATE, [...values(input), nowIso(), id, accountId]);
    return row ? toWindow(row) : undefined;
  }

  delete(accountId: string, id: number): Promise<boolean> {
    return deleteAccountRow(this.#db, 'maintenance_windows', accountId, id);
  }
}
