import { randomUUID } from 'node:crypto';
import type {
  DashboardIncident,
  DashboardIncidentFields,
  DashboardIncidentImpact,
  DashboardIncidentRepo,
  DashboardIncidentUpdate,
  DashboardIncidentUpdateStatus,
  DeleteUpdateResult,
} from '../heartbeat-dashboard-types.ts';
import { nowIso, type SqlDatabase } from '../sql/database.ts';

interface IncidentRow {
  id: string;
  account_id: string;
  dashboard_id: number;
  name: string;
  impact: string;
  started_at: string | null;
  stopped_at: string | null;
  created_at: string;
  updated_at: string | null;
}

interface UpdateRow {
  id: string;
  incident_id: string;
  status: string;
  description: string;
  created_at: string;
  updated_at: string | null;
}

const toIncident = (row: IncidentRow): DashboardIncident => ({
  id: row.id,
  accountId: row.account_id,
  dashboardId: row.dashboard_id,
  name: row.name,
  impact: row.impact as DashboardIncidentImpact,
  startedAt: row.started_at,
  stoppedAt: row.stopped_at,
  createdAt: row.created_at,
  updatedAt: row.updated_at,
});

const toUpdate = (row: UpdateRow): DashboardIncidentUpdate => ({
  id: row.id,
  incidentId: row.incident_id,
  status: row.status as DashboardIncidentUpdateStatus,
  description: row.description,
  createdAt: row.created_at,
  updatedAt: row.updated_at,
});

type NewUpdate = { status: DashboardIncidentUpdateStatus; description: string };

/** Updates are reached only through their incident, and the incident only through its account. */
export class SqlDashboardIncidentRepo implements DashboardIncidentRepo {
  readonly #db: SqlDatabase;
  constructor(db: SqlDatabase) {
    this.#db = db;
  }

  async create(accountId: string, dashboardId: number, fields: DashboardIncidentFields, update: NewUpdate) {
    const id = randomUUID();
    return this.#db.transaction(async () => {
      await this.#db.run(
        `INSERT INTO dashboard_incidents (id, account_id, dashboard_id, name, impact, started_at, stopped_at, created_at)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
        [id, accountId, dashboardId, fields.name, fields.impact, fields.startedAt, fields.stoppedAt, nowIso()],
      );
      const first = await this.#insertUpdate(id, update);
      return { incident: await this.#mustGet(accountId, id), updates: [first] };
    });
  }

  async get(accountId: string, id: string) {
    const row = await this.#row(accountId, id);
    return row && toIncident(row);
  }

  async update(accountId: string, id: string, fields: DashboardIncidentFields) {
    const { changes } = await this.#db.run(
      'UPDATE dashboard_incidents SET name = ?, impact = ?, started_at = ?, stopped_at = ?, updated_at = ? WHERE id = ? AND account_id = ?',
      [fields.name, fields.impact, fields.startedAt, fields.stoppedAt, nowIso(), id, accountId],
    );
    return changes > 0 ? this.#mustGet(accountId, id) : undefined;
  }

  async delete(accountId: string, id: string) {
    return (
      (await this.#db.run('DELETE FROM dashboard_incidents WHERE id = ? AND account_id = ?', [id, accountId])).changes >
      0
    );
  }

  async listUpdates(accountId: string, incidentId: string, limit?: number) {
    if (!(await this.#row(accountId, incidentId))) return [];
    const newestFirst = 'SELECT * FROM dashboard_incident_updates WHERE incident_id = ? ORDER BY seq DESC';
    const rows =
      limit === undefined
        ? await this.#db.all<UpdateRow>(newestFirst, [incidentId])
        : await this.#db.all<UpdateRow>(`${newestFirst} LIMIT ?`, [incidentId, limit]);
    return rows.map(toUpdate);
  }

  async listActive(accountId: string, dashboardId: number, at: string) {
    // ISO strings of one format compare as their instants; a null start counts as started.
    const rows = await this.#db.all<IncidentRow>(
      `SELECT * FROM dashboard_incidents WHERE account_id = ? AND dashboard_id = ?
       AND (started_at IS NULL OR started_at <= ?) AND (stopped_at IS NULL OR stopped_at > ?) ORDER BY seq DESC`,
      [accountId, dashboardId, at, at],
    );
    return Promise.all(
      rows.map(async (row) => {
        const update = await this.#db.get<UpdateRow>(
          'SELECT * FROM dashboard_incident_updates WHERE incident_id = ? ORDER BY seq DESC LIMIT 1',
          [row.id],
        );
        return { incident: toIncident(row), latest: update && toUpdate(update) };
      }),
    );
  }

  async addUpdate(accountId: string, incidentId: string, update: NewUpdate) {
    return this.#db.transaction(async () => {
      if (!(await this.#row(accountId, incidentId))) return undefined;
      return this.#insertUpdate(incidentId, update);
    });
  }

  async editUpdate(accountId: string, incidentId: string, updateId: string, description: string) {
    return this.#db.transaction(async () => {
      if (!(await this.#row(accountId, incidentId))) return undefined;
      const { changes } = await this.#db.run(
        'UPDATE dashboard_incident_updates SET description = ?, updated_at = ? WHERE id = ? AND incident_id = ?',
        [description, nowIso(), updateId, incidentId],
      );
      if (changes === 0) return undefined;
      const row = await this.#db.get<UpdateRow>('SELECT * FROM dashboard_incident_updates WHERE id = ?', [updateId]);
      return row && toUpdate(row);
    });
  }

  async deleteUpdate(accountId: string, incidentId: string, updateId: string): Promise<DeleteUpdateResult> {
    // Read-then-write (the count guards the last update): serializable on PostgreSQL.
    return this.#db.transaction(async () => {
      if (!(await this.#row(accountId, incidentId))) return 'not-found';
      const exists = await this.#db.get('SELECT 1 FROM dashboard_incident_updates WHERE id = ? AND incident_id = ?', [
        updateId,
        incidentId,
      ]);
      if (!exists) return 'not-found';
      const count = await this.#db.get<{ n: number }>(
        'SELECT count(*) AS n FROM dashboard_incident_updates WHERE incident_id = ?',
        [incidentId],
      );
      if ((count?.n ?? 0) <= 1) return 'last-update';
      await this.#db.run('DELETE FROM dashboard_incident_updates WHERE id = ?', [updateId]);
      return 'deleted';
    });
  }

  async #insertUpdate(incidentId: string, update: NewUpdate): Promise<DashboardIncidentUpdate> {
    const row: UpdateRow = {
      id: randomUUID(),
      incident_id: incidentId,
      status: update.status,
      description: update.description,
      created_at: nowIso(),
      updated_at: null,
    };
    await this.#db.run(
      'INSERT INTO dashboard_incident_updates (id, incident_id, status, description, created_at) VALUES (?, ?, ?, ?, ?)',
      [row.id, row.incident_id, row.status, row.description, row.created_at],
    );
    return toUpdate(row);
  }

  #row(accountId: string, id: string): Promise<IncidentRow | undefined> {
    return this.#db.get<IncidentRow>('SELECT * FROM dashboard_incidents WHERE id = ? AND account_id = ?', [
      id,
      accountId,
    ]);
  }

  async #mustGet(accountId: string, id: string): Promise<DashboardIncident> {
    const row = await this.#row(accountId, id);
    if (!row) throw new Error(`incident ${id} vanished right after it was written`);
    return toIncident(row);
  }
}
