/**
 * The reads of a public status page. Service ids travel as one JSON array (SQLite's json_each,
 * PostgreSQL's jsonb_array_elements_text), so each statement's text is fixed and prepared once.
 * Shaped for a page with many incidents: the open ones come from a partial index, the history from
 * (account_id, started_at, seq), never the whole table.
 * `+isv.service_id` keeps SQLite from probing the link index once per page service for each incident:
 * it looks the incident's few links up by incident id and tests each against the page's set.
 * PostgreSQL has no planner hints, so there the statements run without them (dialectSql).
 */
import { BadRequestError } from '../../http/errors.ts';
import type { Dialect, SqlDatabase } from '../sql/database.ts';
import { dialectSql } from '../sql/dialect-sql.ts';
import type { IncidentDay, PageScope, StatusPageReadRepo } from '../status-page-web-types.ts';
import {
  INCIDENT_SEVERITIES,
  type IncidentRecord,
  type IncidentSeverity,
  type Page,
  type StatusPage,
} from '../status-pages-types.ts';
import { hydrateIncidents, INCIDENT_COLUMNS, type IncidentRow } from './incidents.ts';
import type { SqlStatusPageRepo } from './status-pages.ts';

/** The statements' SQL in the database's dialect (planner hints are SQLite's; see the top of this file). */
function readSql(dialect: Dialect) {
  const d = dialectSql(dialect);
  const onPageServices = `${d.noIndex('isv.service_id')} IN (${d.jsonArrayValues('?')})`;
  /** Incidents of the scope's account with a link to one of its services (services: param 2). */
  const onPage = `i.account_id = ? AND EXISTS (SELECT 1 FROM incident_services isv WHERE isv.incident_id = i.id AND ${onPageServices})`;
  const open = `incidents i ${d.indexedBy('incidents_account_open')}`;
  const byStart = `incidents i ${d.indexedBy('incidents_account_started')}`;
  return {
    openIncidents: `SELECT ${INCIDENT_COLUMNS} FROM ${open} WHERE ${onPage} AND i.last_update_status <> 'RESOLVED' ORDER BY i.seq DESC LIMIT ?`,
    openSeverities: `SELECT DISTINCT isv.service_id, i.severity FROM ${open} JOIN incident_services isv ON isv.incident_id = i.id
       WHERE i.account_id = ? AND i.last_update_status <> 'RESOLVED' AND ${onPageServices}`,
    // Named as IncidentDay's fields (quoted, for PostgreSQL), so rows need no copy into that shape.
    startedSince: `SELECT i.id, i.name, i.severity, i.started_at AS "startedAt", isv.service_id AS "serviceId"
       FROM ${byStart} JOIN incident_services isv ON isv.incident_id = i.id
       WHERE i.account_id = ? AND i.started_at >= ? AND ${onPageServices}
       ORDER BY i.started_at DESC, i.seq DESC`,
    history: `SELECT ${INCIDENT_COLUMNS}, i.started_at FROM ${byStart}
       WHERE ${onPage} AND (i.started_at < ? OR (i.started_at = ? AND i.seq < ?))
       ORDER BY i.started_at DESC, i.seq DESC LIMIT ?`,
    incident: `SELECT ${INCIDENT_COLUMNS} FROM incidents i WHERE i.id = ? AND ${onPage}`,
  };
}

const HISTORY_TAG = 'sph';

function encodeHistoryCursor(row: { started_at: string; seq: number }): string {
  return Buffer.from(`${HISTORY_TAG}|${row.started_at}|${row.seq}`, 'utf8').toString('base64url');
}

function decodeHistoryCursor(cursor: string): { startedAt: string; seq: number } {
  const [tag, startedAt, seq] = Buffer.from(cursor, 'base64url').toString('utf8').split('|');
  if (tag !== HISTORY_TAG || !startedAt || !/^\d{1,15}$/.test(seq ?? '') || Number.isNaN(Date.parse(startedAt))) {
    throw new BadRequestError('querystring/before is not a cursor of this history; follow the "Older incidents" link');
  }
  return { startedAt, seq: Number(seq) };
}

export class SqlStatusPageReadRepo implements StatusPageReadRepo {
  readonly #db: SqlDatabase;
  readonly #pages: SqlStatusPageRepo;
  readonly #sql: ReturnType<typeof readSql>;
  constructor(db: SqlDatabase, pages: SqlStatusPageRepo) {
    this.#db = db;
    this.#pages = pages;
    this.#sql = readSql(db.dialect);
  }

  async version(accountId: string): Promise<number> {
    const row = await this.#db.get<{ version: number }>(
      'SELECT version FROM status_page_versions WHERE account_id = ?',
      [accountId],
    );
    return row?.version ?? 0;
  }

  async findByAddress(kind: 'url' | 'customDomain', value: string): Promise<StatusPage | undefined> {
    const column = kind === 'url' ? 'url' : 'custom_domain';
    const row = await this.#db.get<{ id: string; account_id: string }>(
      `SELECT id, account_id FROM status_pages WHERE ${column} = ?`,
      [value.toLowerCase()],
    );
    return row && this.#pages.get(row.account_id, row.id);
  }

  async openIncidents(scope: PageScope, limit: number): Promise<IncidentRecord[]> {
    const rows = await this.#db.all<IncidentRow>(this.#sql.openIncidents, [
      scope.accountId,
      JSON.stringify(scope.serviceIds),
      limit,
    ]);
    return hydrateIncidents(this.#db, rows);
  }

  async openSeverities(scope: PageScope): Promise<Map<string, IncidentSeverity>> {
    const rows = await this.#db.all<{ service_id: string; severity: IncidentSeverity }>(this.#sql.openSeverities, [
      scope.accountId,
      JSON.stringify(scope.serviceIds),
    ]);
    const worst = new Map<string, IncidentSeverity>();
    for (const row of rows) {
      const current = worst.get(row.service_id);
      if (!current || INCIDENT_SEVERITIES.indexOf(row.severity) < INCIDENT_SEVERITIES.indexOf(current))
        worst.set(row.service_id, row.severity);
    }
    return worst;
  }

  async startedSince(scope: PageScope, since: string): Promise<IncidentDay[]> {
    return this.#db.all<IncidentDay>(this.#sql.startedSince, [
      scope.accountId,
      since,
      JSON.stringify(scope.serviceIds),
    ]);
  }

  async history(scope: PageScope, page: { limit: number; nextId?: string }): Promise<Page<IncidentRecord>> {
    const before = page.nextId ? decodeHistoryCursor(page.nextId) : { startedAt: '9999', seq: Number.MAX_SAFE_INTEGER };
    const rows = await this.#db.all<IncidentRow & { started_at: string }>(this.#sql.history, [
      scope.accountId,
      JSON.stringify(scope.serviceIds),
      before.startedAt,
      before.startedAt,
      before.seq,
      page.limit + 1,
    ]);
    const pageRows = rows.slice(0, page.limit);
    const last = pageRows.at(-1);
    return {
      entries: await hydrateIncidents(this.#db, pageRows),
      nextId: rows.length > page.limit && last ? encodeHistoryCursor(last) : null,
    };
  }

  async incident(scope: PageScope, incidentId: string): Promise<IncidentRecord | undefined> {
    const row = await this.#db.get<IncidentRow>(this.#sql.incident, [
      incidentId,
      scope.accountId,
      JSON.stringify(scope.serviceIds),
    ]);
    return row ? (await hydrateIncidents(this.#db, [row]))[0] : undefined;
  }
}
