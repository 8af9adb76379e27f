/**
 * Status page incidents and their updates. lastUpdateStatus and duration are derived from the
 * updates (store/incident-state.ts) and stored on the incident row in the same transaction as every
 * change of its updates, so lists read them without touching the updates table. Updates with
 * notifySubscribers queue their deliveries in that transaction too (outbox.ts).
 */
import { randomUUID } from 'node:crypto';
import { deriveIncidentState, incidentStart } from '../incident-state.ts';
import { nowIso, type SqlDatabase, type SqlExecutor } from '../sql/database.ts';
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

export const INCIDENT_COLUMNS =
  'i.seq, i.id, i.account_id, i.name, i.severity, i.last_update_status, i.duration, i.created_at, i.updated_at';
const UPDATE_COLUMNS =
  'u.seq, u.id, u.incident_id, u.description, u.status, u.public_date, u.notify_subscribers, u.created_at, u.updated_at';
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

export class SqlIncidentRepo implements IncidentRepo {
  readonly #db: SqlDatabase;
  constructor(db: SqlDatabase) {
    this.#db = db;
  }

  async create(
    accountId: string,
    input: IncidentInput & { update: IncidentUpdateInput },
  ): Promise<Notifying<IncidentRecord>> {
    return this.#db.transaction(async () => {
      const services = await resolveServices(this.#db, accountId, input.serviceIds, 'body/services');
      const id = randomUUID();
      const now = nowIso();
      await this.#db.run(
        `INSERT INTO incidents (id, account_id, name, severity, last_update_status, created_at)
         VALUES (?, ?, ?, ?, 'INVESTIGATING', ?)`,
        [id, accountId, input.name, input.severity, now],
      );
      await this.#linkServices(id, services);
      const updateId = await this.#insertUpdate(id, input.update, now);
      await this.#recompute(id, null);
      return this.#afterUpdateWrite(
        accountId,
        id,
        updateId,
        input.update.notifySubscribers,
        now,
        (incident) => incident,
      );
    });
  }

  async update(accountId: string, id: string, input: IncidentInput): Promise<IncidentRecord | undefined> {
    return this.#db.transaction(async () => {
      // Ownership first: another account's incident is a 404 whatever the body says.
      if (!(await this.#owned(accountId, id))) return undefined;
      const services = await resolveServices(this.#db, accountId, input.serviceIds, 'body/services');
      const { changes } = await this.#db.run(
        'UPDATE incidents SET name = ?, severity = ?, updated_at = ? WHERE id = ? AND account_id = ?',
        [input.name, input.severity, nowIso(), id, accountId],
      );
      if (changes === 0) return undefined;
      await this.#db.run('DELETE FROM incident_services WHERE incident_id = ?', [id]);
      await this.#linkServices(id, services);
      return this.get(accountId, id);
    });
  }

  async get(accountId: string, id: string): Promise<IncidentRecord | undefined> {
    const row = await this.#db.get<IncidentRow>(
      `SELECT ${INCIDENT_COLUMNS} FROM incidents i WHERE i.id = ? AND i.account_id = ?`,
      [id, accountId],
    );
    return row && (await hydrateIncidents(this.#db, [row]))[0];
  }

  async list(accountId: string, page: PageRequest): Promise<Page<IncidentRecord>> {
    const before = page.nextId ? decodeSeqCursor('inc', page.nextId) : Number.MAX_SAFE_INTEGER;
    // Walks the (account_id, seq) index backwards from the cursor: no OFFSET, no sort.
    const rows = await this.#db.all<IncidentRow>(
      `SELECT ${INCIDENT_COLUMNS} FROM incidents i WHERE i.account_id = ? AND i.seq < ? ORDER BY i.seq DESC LIMIT ?`,
      [accountId, before, page.limit + 1],
    );
    const hydrated = await hydrateIncidents(this.#db, rows.slice(0, page.limit));
    return toPage('inc', rows, page.limit, () => hydrated);
  }

  async delete(accountId: string, id: string): Promise<boolean> {
    return (await this.#db.run('DELETE FROM incidents WHERE id = ? AND account_id = ?', [id, accountId])).changes > 0;
  }

  async listUpdates(accountId: string, incidentId: string, limit: number): Promise<IncidentUpdateRecord[] | undefined> {
    if (!(await this.#owned(accountId, incidentId))) return undefined;
    const rows = await this.#db.all<UpdateRow>(
      `SELECT ${UPDATE_COLUMNS} FROM incident_updates u WHERE u.incident_id = ? ORDER BY ${NEWEST_UPDATE_FIRST} LIMIT ?`,
      [incidentId, limit],
    );
    return rows.map(toUpdate);
  }

  async addUpdate(
    accountId: string,
    incidentId: string,
    input: IncidentUpdateInput,
  ): Promise<Notifying<IncidentUpdateRecord> | undefined> {
    return this.#db.transaction(async () => {
      if (!(await this.#owned(accountId, incidentId))) return undefined;
      const now = nowIso();
      const updateId = await this.#insertUpdate(incidentId, input, now);
      return this.#updateWritten(accountId, incidentId, updateId, input.notifySubscribers, now);
    });
  }

  async getUpdate(accountId: string, incidentId: string, updateId: string): Promise<IncidentUpdateRecord | undefined> {
    const row = await this.#db.get<UpdateRow>(
      `SELECT ${UPDATE_COLUMNS} FROM incident_updates u JOIN incidents i ON i.id = u.incident_id
       WHERE u.id = ? AND u.incident_id = ? AND i.account_id = ?`,
      [updateId, incidentId, accountId],
    );
    return row && toUpdate(row);
  }

  async replaceUpdate(
    accountId: string,
    incidentId: string,
    updateId: string,
    input: IncidentUpdateInput,
  ): Promise<Notifying<IncidentUpdateRecord> | undefined> {
    return this.#db.transaction(async () => {
      if (!(await this.getUpdate(accountId, incidentId, updateId))) return undefined;
      const now = nowIso();
      await this.#db.run(
        `UPDATE incident_updates SET description = ?, status = ?, public_date = ?, notify_subscribers = ?, updated_at = ?
         WHERE id = ? AND incident_id = ?`,
        [
          input.description,
          input.status,
          input.publicIncidentUpdateDate,
          input.notifySubscribers ? 1 : 0,
          now,
          updateId,
          incidentId,
        ],
      );
      return this.#updateWritten(accountId, incidentId, updateId, input.notifySubscribers, now);
    });
  }

  async deleteUpdate(accountId: string, incidentId: string, updateId: string): Promise<boolean> {
    return this.#db.transaction(async () => {
      if (!(await this.getUpdate(accountId, incidentId, updateId))) return false;
      await this.#db.run('DELETE FROM incident_updates WHERE id = ? AND incident_id = ?', [updateId, incidentId]);
      await this.#recompute(incidentId, nowIso());
      return true;
    });
  }

  async listUnresolvedByStatusPage(accountId: string, statusPageIds: string[]): Promise<Map<string, IncidentRecord[]>> {
    const result = new Map<string, IncidentRecord[]>(statusPageIds.map((id) => [id, []]));
    if (statusPageIds.length === 0) return result;
    const links = await this.#db.all<{ page_id: string; incident_id: string }>(
      `SELECT DISTINCT c.status_page_id AS page_id, i.id AS incident_id, i.seq AS seq FROM status_page_cards c
       JOIN status_page_card_services cs ON cs.card_id = c.id
       JOIN incident_services isv ON isv.service_id = cs.service_id
       JOIN incidents i ON i.id = isv.incident_id
       WHERE c.status_page_id IN (${placeholders(statusPageIds.length)}) AND i.account_id = ?
         AND i.last_update_status <> 'RESOLVED'
       ORDER BY i.seq DESC`,
      [...statusPageIds, accountId],
    );
    if (links.length === 0) return result;
    const ids = [...new Set(links.map((l) => l.incident_id))];
    const rows = await this.#db.all<IncidentRow>(
      `SELECT ${INCIDENT_COLUMNS} FROM incidents i WHERE i.id IN (${placeholders(ids.length)})`,
      ids,
    );
    const byId = new Map((await hydrateIncidents(this.#db, rows)).map((incident) => [incident.id, incident]));
    for (const link of links) {
      const incident = byId.get(link.incident_id);
      if (incident) result.get(link.page_id)?.push(incident);
    }
    return result;
  }

  async #owned(accountId: string, incidentId: string): Promise<boolean> {
    return (
      (await this.#db.get('SELECT 1 AS found FROM incidents WHERE id = ? AND account_id = ?', [
        incidentId,
        accountId,
      ])) !== undefined
    );
  }

  async #linkServices(incidentId: string, services: SpService[]): Promise<void> {
    for (const [position, service] of services.entries()) {
      await this.#db.run('INSERT INTO incident_services (incident_id, service_id, position) VALUES (?, ?, ?)', [
        incidentId,
        service.id,
        position,
      ]);
    }
  }

  async #insertUpdate(incidentId: string, input: IncidentUpdateInput, now: string): Promise<string> {
    const id = randomUUID();
    await this.#db.run(
      `INSERT INTO incident_updates (id, incident_id, description, status, public_date, notify_subscribers, created_at)
       VALUES (?, ?, ?, ?, ?, ?, ?)`,
      [
        id,
        incidentId,
        input.description,
        input.status,
        input.publicIncidentUpdateDate,
        input.notifySubscribers ? 1 : 0,
        now,
      ],
    );
    return id;
  }

  /** Re-derives lastUpdateStatus, duration and the start from the updates; `touchedAt` also sets updated_at. */
  async #recompute(incidentId: string, touchedAt: string | null): Promise<void> {
    const rows = await this.#db.all<{ seq: number; status: IncidentStatus | null; public_date: string }>(
      'SELECT seq, status, public_date FROM incident_updates WHERE incident_id = ?',
      [incidentId],
    );
    const entries = rows.map((r) => ({ sequence: r.seq, status: r.status, publicIncidentUpdateDate: r.public_date }));
    const { lastUpdateStatus, duration } = deriveIncidentState(entries);
    await this.#db.run(
      `UPDATE incidents SET last_update_status = ?, duration = ?, started_at = COALESCE(?, created_at),
         updated_at = COALESCE(?, updated_at) WHERE id = ?`,
      [lastUpdateStatus, duration, incidentStart(entries), touchedAt, incidentId],
    );
  }

  /** After an update was added or replaced: re-derives the incident and returns the update. */
  async #updateWritten(
    accountId: string,
    incidentId: string,
    updateId: string,
    notify: boolean,
    now: string,
  ): Promise<Notifying<IncidentUpdateRecord>> {
    await this.#recompute(incidentId, now);
    return this.#afterUpdateWrite(accountId, incidentId, updateId, notify, now, (_, update) => update);
  }

  /** Reads back the incident and the written update, and queues notifications when asked to. */
  async #afterUpdateWrite<T>(
    accountId: string,
    incidentId: string,
    updateId: string,
    notify: boolean,
    now: string,
    pick: (incident: IncidentRecord, update: IncidentUpdateRecord) => T,
  ): Promise<Notifying<T>> {
    const incident = await this.get(accountId, incidentId);
    const update = incident?.updates.find((u) => u.id === updateId);
    if (!incident || !update)
      throw new Error(`incident ${incidentId} or its update ${updateId} vanished inside a transaction`);
    const queued = notify ? await enqueueIncidentNotifications(this.#db, incident, update, now) : 0;
    return { value: pick(incident, update), queued };
  }
}

/** Adds services and updates to incident rows with two queries for the whole page. */
export async function hydrateIncidents(db: SqlExecutor, rows: IncidentRow[]): Promise<IncidentRecord[]> {
  if (rows.length === 0) return [];
  const ids = rows.map((r) => r.id);
  const serviceRows = await db.all<Parameters<typeof toService>[0] & { incident_id: string }>(
    `SELECT isv.incident_id, s.seq, s.id, s.account_id, s.name, s.created_at, s.updated_at
     FROM incident_services isv JOIN sp_services s ON s.id = isv.service_id
     WHERE isv.incident_id IN (${placeholders(ids.length)}) ORDER BY isv.incident_id, isv.position`,
    ids,
  );
  const updateRows = await db.all<UpdateRow>(
    `SELECT ${UPDATE_COLUMNS} FROM incident_updates u WHERE u.incident_id IN (${placeholders(ids.length)})
     ORDER BY ${NEWEST_UPDATE_FIRST}`,
    ids,
  );
  const services = groupBy(serviceRows, (row) => row.incident_id, toService);
  const updates = groupBy(updateRows, (row) => row.incident_id, toUpdate);
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

function groupBy<R, T>(rows: R[], key: (row: R) => string, map: (row: R) => T): Map<string, T[]> {
  const groups = new Map<string, T[]>();
  for (const row of rows) {
    const list = groups.get(key(row)) ?? [];
    list.push(map(row));
    groups.set(key(row), list);
  }
  return groups;
}
