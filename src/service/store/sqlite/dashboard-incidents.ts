import { randomUUID } from 'node:crypto';
import type { DatabaseSync } from 'node:sqlite';
import type {
  DashboardIncident,
  DashboardIncidentFields,
  DashboardIncidentImpact,
  DashboardIncidentRepo,
  DashboardIncidentUpdate,
  DashboardIncidentUpdateStatus,
  DeleteUpdateResult,
} from '../heartbeat-dashboard-types.ts';
import { inTransaction, nowIso } from './db.ts';

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
export class SqliteDashboardIncidentRepo implements DashboardIncidentRepo {
  readonly #db: DatabaseSync;
  constructor(db: DatabaseSync) {
    this.#db = db;
  }

  async create(accountId: string, dashboardId: number, fields: DashboardIncidentFields, update: NewUpdate) {
    const id = randomUUID();
    return inTransaction(this.#db, () => {
      this.#db
        .prepare(
          `INSERT INTO dashboard_incidents (id, account_id, dashboard_id, name, impact, started_at, stopped_at, created_at)
           VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
        )
        .run(id, accountId, dashboardId, fields.name, fields.impact, fields.startedAt, fields.stoppedAt, nowIso());
      const first = this.#insertUpdate(id, update);
      return { incident: this.#mustGet(accountId, id), updates: [first] };
    });
  }

  async get(accountId: string, id: string) {
    const row = this.#row(accountId, id);
    return row && toIncident(row);
  }

  async update(accountId: string, id: string, fields: DashboardIncidentFields) {
    const changes = this.#db
      .prepare(
        'UPDATE dashboard_incidents SET name = ?, impact = ?, started_at = ?, stopped_at = ?, updated_at = ? WHERE id = ? AND account_id = ?',
      )
      .run(fields.name, fields.impact, fields.startedAt, fields.stoppedAt, nowIso(), id, accountId).changes;
    return changes > 0 ? this.#mustGet(accountId, id) : undefined;
  }

  async delete(accountId: string, id: string) {
    return this.#db.prepare('DELETE FROM dashboard_incidents WHERE id = ? AND account_id = ?').run(id, accountId).changes > 0;
  }

  async listUpdates(accountId: string, incidentId: string, limit?: number) {
    if (!this.#row(accountId, incidentId)) return [];
    const rows = this.#db
      .prepare('SELECT * FROM dashboard_incident_updates WHERE incident_id = ? ORDER BY seq DESC LIMIT ?')
      .all(incidentId, limit ?? -1) as unknown as UpdateRow[];
    return rows.map(toUpdate);
  }

  async listActive(accountId: string, dashboardId: number, at: string) {
    // ISO strings of one format compare as their instants; a null start counts as started.
    const rows = this.#db
      .prepare(
        `SELECT * FROM dashboard_incidents WHERE account_id = ? AND dashboard_id = ?
         AND (started_at IS NULL OR started_at <= ?) AND (stopped_at IS NULL OR stopped_at > ?) ORDER BY seq DESC`,
      )
      .all(accountId, dashboardId, at, at) as unknown as IncidentRow[];
    const latest = this.#db.prepare('SELECT * FROM dashboard_incident_updates WHERE incident_id = ? ORDER BY seq DESC LIMIT 1');
    return rows.map((row) => {
      const update = latest.get(row.id) as UpdateRow | undefined;
      return { incident: toIncident(row), latest: update && toUpdate(update) };
    });
  }

  async addUpdate(accountId: string, incidentId: string, update: NewUpdate) {
    return inTransaction(this.#db, () => {
      if (!this.#row(accountId, incidentId)) return undefined;
      return this.#insertUpdate(incidentId, update);
    });
  }

  async editUpdate(accountId: string, incidentId: string, updateId: string, description: string) {
    return inTransaction(this.#db, () => {
      if (!this.#row(accountId, incidentId)) return undefined;
      const changes = this.#db
        .prepare('UPDATE dashboard_incident_updates SET description = ?, updated_at = ? WHERE id = ? AND incident_id = ?')
        .run(description, nowIso(), updateId, incidentId).changes;
      if (changes === 0) return undefined;
      const row = this.#db.prepare('SELECT * FROM dashboard_incident_updates WHERE id = ?').get(updateId) as unknown as UpdateRow;
      return toUpdate(row);
    });
  }

  async deleteUpdate(accountId: string, incidentId: string, updateId: string): Promise<DeleteUpdateResult> {
    return inTransaction(this.#db, () => {
      if (!this.#row(accountId, incidentId)) return 'not-found';
      const exists = this.#db.prepare('SELECT 1 FROM dashboard_incident_updates WHERE id = ? AND incident_id = ?').get(updateId, incidentId);
      if (!exists) return 'not-found';
      const { n } = this.#db.prepare('SELECT count(*) AS n FROM dashboard_incident_updates WHERE incident_id = ?').get(incidentId) as {
        n: number;
      };
      if (n <= 1) return 'last-update';
      this.#db.prepare('DELETE FROM dashboard_incident_updates WHERE id = ?').run(updateId);
      return 'deleted';
    });
  }

  #insertUpdate(incidentId: string, update: NewUpdate): DashboardIncidentUpdate {
    const row: UpdateRow = {
      id: randomUUID(),
      incident_id: incidentId,
      status: update.status,
      description: update.description,
      created_at: nowIso(),
      updated_at: null,
    };
    this.#db
      .prepare('INSERT INTO dashboard_incident_updates (id, incident_id, status, description, created_at) VALUES (?, ?, ?, ?, ?)')
      .run(row.id, row.incident_id, row.status, row.description, row.created_at);
    return toUpdate(row);
  }

  #row(accountId: string, id: string): IncidentRow | undefined {
    return this.#db.prepare('SELECT * FROM dashboard_incidents WHERE id = ? AND account_id = ?').get(id, accountId) as IncidentRow | undefined;
  }

  #mustGet(accountId: string, id: string): DashboardIncident {
    const row = this.#row(accountId, id);
    if (!row) throw new Error(`incident ${id} vanished right after it was written`);
    return toIncident(row);
  }
}
