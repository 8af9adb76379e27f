/**
 * Status page incidents and their updates. lastUpdateStatus and duration are derived from the
 * updates (store/incident-state.ts) and stored on the incident row in the same transaction as every
 * change of its updates, so lists read them without touching the updates table. Updates with
 * notifySubscribers queue their deliveries in that transaction too (outbox.ts).
 */
import { randomUUID } from 'node:crypto';
import type { DatabaseSync, StatementSync } from 'node:sqlite';
import { deriveIncidentState, incidentStart } from '../incident-state.ts';
import type {
  IncidentInput,
  IncidentRecord,
  IncidentRepo,
  IncidentSeverity,
  IncidentStatus,
  IncidentUpdateInput,
  IncidentUpdateRecord,
  Notifying,
  Page,
  PageRequest,
  SpService,
} from '../status-pages-types.ts';
import { inTransaction, nowIso, statement } from './db.ts';
import { enqueueIncidentNotifications } from './outbox.ts';
import { decodeSeqCursor, toPage } from './seq-cursor.ts';
import { resolveServices, toService } from './status-pages.ts';

export interface IncidentRow {
  seq: number;
  id: string;
  account_id: string;
  name: string;
  severity: string;
  last_update_status: string;
  duration: number | null;
  created_at: string;
  updated_at: string | null;
}

interface UpdateRow {
  seq: number;
  id: string;
  incident_id: string;
  description: string;
  status: string | null;
  public_date: string;
  notify_subscribers: number;
  created_at: string;
  updated_at: string | null;
}

export const INCIDENT_COLUMNS = 'i.seq, i.id, i.account_id, i.name, i.severity, i.last_update_status, i.duration, i.created_at, i.updated_at';
const UPDATE_COLUMNS = 'u.seq, u.id, u.incident_id, u.description, u.status, u.public_date, u.notify_subscribers, u.created_at, u.updated_at';
/** Newest first: the order of every list of updates this API returns. */
const NEWEST_UPDATE_FIRST = 'u.public_date DESC, u.seq DESC';

const toUpdate = (row: UpdateRow): IncidentUpdateRecord => ({
  id: row.id,
  incidentId: row.incident_id,
  description: row.description,
  status: row.status as IncidentStatus | null,
  publicIncidentUpdateDate: row.public_date,
  notifySubscribers: row.notify_subscribers === 1,
  createdAt: row.created_at,
  updatedAt: row.updated_at,
});

const placeholders = (n: number) => Array.from({ length: n }, () => '?').join(', ');

export class SqliteIncidentRepo implements IncidentRepo {
  readonly #db: DatabaseSync;
  /** Compiled statements by SQL text: compiling is a large share of a short read's cost. */
  readonly #statements = new Map<string, StatementSync>();
  constructor(db: DatabaseSync) {
    this.#db = db;
  }

  #prepare(sql: string): StatementSync {
    let statement = this.#statements.get(sql);
    if (!statement) {
      statement = this.#db.prepare(sql);
      this.#statements.set(sql, statement);
    }
    return statement;
  }

  async create(accountId: string, input: IncidentInput & { update: IncidentUpdateInput }): Promise<Notifying<IncidentRecord>> {
    return inTransaction(this.#db, () => {
      const services = resolveServices(this.#db, accountId, input.serviceIds, 'body/services');
      const id = randomUUID();
      const now = nowIso();
      this.#prepare(
          `INSERT INTO incidents (id, account_id, name, severity, last_update_status, created_at)
           VALUES (?, ?, ?, ?, 'INVESTIGATING', ?)`,
        )
        .run(id, accountId, input.name, input.severity, now);
      this.#linkServices(id, services);
      const updateId = this.#insertUpdate(id, input.update, now);
      this.#recompute(id, null);
      return this.#afterUpdateWrite(accountId, id, updateId, input.update.notifySubscribers, now, (incident) => incident);
    });
  }

  async update(accountId: string, id: string, input: IncidentInput): Promise<IncidentRecord | undefined> {
    return inTransaction(this.#db, () => {
      // Ownership first: another account's incident is a 404 whatever the body says.
      if (!this.#owned(accountId, id)) return undefined;
      const services = resolveServices(this.#db, accountId, input.serviceIds, 'body/services');
      const changed = this.#prepare('UPDATE incidents SET name = ?, severity = ?, updated_at = ? WHERE id = ? AND account_id = ?')
        .run(input.name, input.severity, nowIso(), id, accountId).changes;
      if (changed === 0) return undefined;
      this.#prepare('DELETE FROM incident_services WHERE incident_id = ?').run(id);
      this.#linkServices(id, services);
      return this.#getSync(accountId, id);
    });
  }

  async get(accountId: string, id: string): Promise<IncidentRecord | undefined> {
    return this.#getSync(accountId, id);
  }

  async list(accountId: string, page: PageRequest): Promise<Page<IncidentRecord>> {
    const before = page.nextId ? decodeSeqCursor('inc', page.nextId) : Number.MAX_SAFE_INTEGER;
    // Walks the (account_id, seq) index backwards from the cursor: no OFFSET, no sort.
    const rows = this.#prepare(`SELECT ${INCIDENT_COLUMNS} FROM incidents i WHERE i.account_id = ? AND i.seq < ? ORDER BY i.seq DESC LIMIT ?`)
      .all(accountId, before, page.limit + 1) as unknown as IncidentRow[];
    return toPage('inc', rows, page.limit, (r) => this.#hydrate(r));
  }

  async delete(accountId: string, id: string): Promise<boolean> {
    return this.#prepare('DELETE FROM incidents WHERE id = ? AND account_id = ?').run(id, accountId).changes > 0;
  }

  async listUpdates(accountId: string, incidentId: string, limit: number): Promise<IncidentUpdateRecord[] | undefined> {
    if (!this.#owned(accountId, incidentId)) return undefined;
    const rows = this.#prepare(`SELECT ${UPDATE_COLUMNS} FROM incident_updates u WHERE u.incident_id = ? ORDER BY ${NEWEST_UPDATE_FIRST} LIMIT ?`)
      .all(incidentId, limit) as unknown as UpdateRow[];
    return rows.map(toUpdate);
  }

  async addUpdate(
    accountId: string,
    incidentId: string,
    input: IncidentUpdateInput,
  ): Promise<Notifying<IncidentUpdateRecord> | undefined> {
    return inTransaction(this.#db, () => {
      if (!this.#owned(accountId, incidentId)) return undefined;
      const now = nowIso();
      const updateId = this.#insertUpdate(incidentId, input, now);
      this.#recompute(incidentId, now);
      return this.#afterUpdateWrite(accountId, incidentId, updateId, input.notifySubscribers, now, (_, update) => update);
    });
  }

  async getUpdate(accountId: string, incidentId: string, updateId: string): Promise<IncidentUpdateRecord | undefined> {
    return this.#getUpdateSync(accountId, incidentId, updateId);
  }

  async replaceUpdate(
    accountId: string,
    incidentId: string,
    updateId: string,
    input: IncidentUpdateInput,
  ): Promise<Notifying<IncidentUpdateRecord> | undefined> {
    return inTransaction(this.#db, () => {
      if (!this.#getUpdateSync(accountId, incidentId, updateId)) return undefined;
      const now = nowIso();
      this.#prepare(
          `UPDATE incident_updates SET description = ?, status = ?, public_date = ?, notify_subscribers = ?, updated_at = ?
           WHERE id = ? AND incident_id = ?`,
        )
        .run(input.description, input.status, input.publicIncidentUpdateDate, input.notifySubscribers ? 1 : 0, now, updateId, incidentId);
      this.#recompute(incidentId, now);
      return this.#afterUpdateWrite(accountId, incidentId, updateId, input.notifySubscribers, now, (_, update) => update);
    });
  }

  async deleteUpdate(accountId: string, incidentId: string, updateId: string): Promise<boolean> {
    return inTransaction(this.#db, () => {
      if (!this.#getUpdateSync(accountId, incidentId, updateId)) return false;
      this.#prepare('DELETE FROM incident_updates WHERE id = ? AND incident_id = ?').run(updateId, incidentId);
      this.#recompute(incidentId, nowIso());
      return true;
    });
  }

  async listUnresolvedByStatusPage(accountId: string, statusPageIds: string[]): Promise<Map<string, IncidentRecord[]>> {
    const result = new Map<string, IncidentRecord[]>(statusPageIds.map((id) => [id, []]));
    if (statusPageIds.length === 0) return result;
    const links = this.#prepare(
        `SELECT DISTINCT c.status_page_id AS page_id, i.id AS incident_id, i.seq AS seq FROM status_page_cards c
         JOIN status_page_card_services cs ON cs.card_id = c.id
         JOIN incident_services isv ON isv.service_id = cs.service_id
         JOIN incidents i ON i.id = isv.incident_id
         WHERE c.status_page_id IN (${placeholders(statusPageIds.length)}) AND i.account_id = ?
           AND i.last_update_status <> 'RESOLVED'
         ORDER BY i.seq DESC`,
      )
      .all(...statusPageIds, accountId) as unknown as { page_id: string; incident_id: string }[];
    if (links.length === 0) return result;
    const ids = [...new Set(links.map((l) => l.incident_id))];
    const rows = this.#prepare(`SELECT ${INCIDENT_COLUMNS} FROM incidents i WHERE i.id IN (${placeholders(ids.length)})`)
      .all(...ids) as unknown as IncidentRow[];
    const byId = new Map(this.#hydrate(rows).map((incident) => [incident.id, incident]));
    for (const link of links) {
      const incident = byId.get(link.incident_id);
      if (incident) result.get(link.page_id)?.push(incident);
    }
    return result;
  }

  #owned(accountId: string, incidentId: string): boolean {
    return this.#prepare('SELECT 1 FROM incidents WHERE id = ? AND account_id = ?').get(incidentId, accountId) !== undefined;
  }

  #getSync(accountId: string, id: string): IncidentRecord | undefined {
    const row = this.#prepare(`SELECT ${INCIDENT_COLUMNS} FROM incidents i WHERE i.id = ? AND i.account_id = ?`)
      .get(id, accountId) as IncidentRow | undefined;
    return row && this.#hydrate([row])[0];
  }

  #getUpdateSync(accountId: string, incidentId: string, updateId: string): IncidentUpdateRecord | undefined {
    const row = this.#prepare(
        `SELECT ${UPDATE_COLUMNS} FROM incident_updates u JOIN incidents i ON i.id = u.incident_id
         WHERE u.id = ? AND u.incident_id = ? AND i.account_id = ?`,
      )
      .get(updateId, incidentId, accountId) as UpdateRow | undefined;
    return row && toUpdate(row);
  }

  #linkServices(incidentId: string, services: SpService[]): void {
    const link = this.#prepare('INSERT INTO incident_services (incident_id, service_id, position) VALUES (?, ?, ?)');
    services.forEach((service, position) => {
      link.run(incidentId, service.id, position);
    });
  }

  #insertUpdate(incidentId: string, input: IncidentUpdateInput, now: string): string {
    const id = randomUUID();
    this.#prepare(
        `INSERT INTO incident_updates (id, incident_id, description, status, public_date, notify_subscribers, created_at)
         VALUES (?, ?, ?, ?, ?, ?, ?)`,
      )
      .run(id, incidentId, input.description, input.status, input.publicIncidentUpdateDate, input.notifySubscribers ? 1 : 0, now);
    return id;
  }

  /** Re-derives lastUpdateStatus, duration and the start from the updates; `touchedAt` also sets updated_at. */
  #recompute(incidentId: string, touchedAt: string | null): void {
    const entries = (
      this.#prepare('SELECT seq, status, public_date FROM incident_updates WHERE incident_id = ?')
        .all(incidentId) as unknown as { seq: number; status: IncidentStatus | null; public_date: string }[]
    ).map((r) => ({ sequence: r.seq, status: r.status, publicIncidentUpdateDate: r.public_date }));
    const { lastUpdateStatus, duration } = deriveIncidentState(entries);
    this.#prepare(
      `UPDATE incidents SET last_update_status = ?, duration = ?, started_at = COALESCE(?, created_at),
         updated_at = COALESCE(?, updated_at) WHERE id = ?`,
    ).run(lastUpdateStatus, duration, incidentStart(entries), touchedAt, incidentId);
  }

  /** Reads back the incident and the written update, and queues notifications when asked to. */
  #afterUpdateWrite<T>(
    accountId: string,
    incidentId: string,
    updateId: string,
    notify: boolean,
    now: string,
    pick: (incident: IncidentRecord, update: IncidentUpdateRecord) => T,
  ): Notifying<T> {
    const incident = this.#getSync(accountId, incidentId);
    const update = incident?.updates.find((u) => u.id === updateId);
    if (!incident || !update) throw new Error(`incident ${incidentId} or its update ${updateId} vanished inside a transaction`);
    const queued = notify ? enqueueIncidentNotifications(this.#db, incident, update, now) : 0;
    return { value: pick(incident, update), queued };
  }

  #hydrate(rows: IncidentRow[]): IncidentRecord[] {
    return hydrateIncidents(this.#db, rows);
  }
}

/** Adds services and updates to incident rows with two queries for the whole page. */
export function hydrateIncidents(db: DatabaseSync, rows: IncidentRow[]): IncidentRecord[] {
  if (rows.length === 0) return [];
  const ids = rows.map((r) => r.id);
  const serviceRows = statement(db, 
      `SELECT isv.incident_id, s.seq, s.id, s.account_id, s.name, s.created_at, s.updated_at
       FROM incident_services isv JOIN sp_services s ON s.id = isv.service_id
       WHERE isv.incident_id IN (${placeholders(ids.length)}) ORDER BY isv.incident_id, isv.position`,
    )
    .all(...ids) as unknown as (Parameters<typeof toService>[0] & { incident_id: string })[];
  const updateRows = statement(db, 
      `SELECT ${UPDATE_COLUMNS} FROM incident_updates u WHERE u.incident_id IN (${placeholders(ids.length)})
       ORDER BY ${NEWEST_UPDATE_FIRST}`,
    )
    .all(...ids) as unknown as UpdateRow[];
  const services = new Map<string, SpService[]>();
  for (const row of serviceRows) {
    const list = services.get(row.incident_id) ?? [];
    list.push(toService(row));
    services.set(row.incident_id, list);
  }
  const updates = new Map<string, IncidentUpdateRecord[]>();
  for (const row of updateRows) {
    const list = updates.get(row.incident_id) ?? [];
    list.push(toUpdate(row));
    updates.set(row.incident_id, list);
  }
  return rows.map((row) => ({
    id: row.id,
    accountId: row.account_id,
    name: row.name,
    severity: row.severity as IncidentSeverity,
    services: services.get(row.id) ?? [],
    updates: updates.get(row.id) ?? [],
    lastUpdateStatus: row.last_update_status as IncidentStatus,
    duration: row.duration,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  }));
}
