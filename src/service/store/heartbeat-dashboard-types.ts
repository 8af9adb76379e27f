/**
 * Repositories of heartbeats (their ping state and events), dashboards and dashboard incidents.
 * Conventions as in store.ts: every account-owned read takes the accountId; times are ISO strings,
 * except the heartbeat clock values (ms since the epoch), which the monitor compares and indexes.
 */
import type { StoredCheck } from './store.ts';

// ---------------------------------------------------------------------------------------------
// Heartbeats

/** Where a heartbeat stands between pings. PENDING: no ping yet; UP: pinged in time; FAILING: missed. */
export type HeartbeatStatus = 'PENDING' | 'UP' | 'FAILING';

/**
 * States of a heartbeat event, a subset of the reference's enum (FAILING, EARLY, RECEIVED, GRACE,
 * LATE). docs/api.md "Heartbeats" defines each; EARLY and GRACE are never recorded by this service.
 */
export type HeartbeatEventState = 'RECEIVED' | 'LATE' | 'FAILING';

export interface HeartbeatState {
  checkId: string;
  accountId: string;
  pingToken: string;
  periodMs: number;
  graceMs: number;
  status: HeartbeatStatus;
  /** The last ping, or when the current wait began (creation, activation, a period change). */
  anchorMs: number;
  lastPingAt: string | null;
  /** anchor + period + grace while activated and not yet failing; null otherwise. */
  deadlineMs: number | null;
}

export interface HeartbeatEvent {
  id: string;
  accountId: string;
  checkId: string;
  state: HeartbeatEventState;
  /** When it happened: the ping's arrival, or the deadline that passed. */
  atMs: number;
  /** `HTTP GET` / `HTTP POST` / `HTTP HEAD` plus the client kind, e.g. `HTTP GET (curl)`; null for FAILING. */
  source: string | null;
  userAgent: string | null;
}

/** Fields of a heartbeat check row plus its heartbeat settings, written together in one transaction. */
export interface HeartbeatCheckInput {
  check: Omit<StoredCheck, 'id' | 'accountId' | 'createdAt' | 'updatedAt' | 'checkType' | 'locationIds'>;
  periodMs: number;
  graceMs: number;
  /** The token pings carry (also kept in check.body.heartbeat, which GET returns). */
  pingToken: string;
}

export interface PingInput {
  atMs: number;
  source: string;
  userAgent: string | null;
}

export interface HeartbeatRepo {
  /** Creates the check row and its heartbeat state; throws ConflictError when pingToken is taken. */
  create(
    accountId: string,
    input: HeartbeatCheckInput,
    nowMs: number,
  ): Promise<{ check: StoredCheck; state: HeartbeatState }>;
  /** Updates both; a period/grace change or activation restarts the wait from nowMs. */
  update(
    accountId: string,
    checkId: string,
    input: HeartbeatCheckInput,
    nowMs: number,
  ): Promise<{ check: StoredCheck; state: HeartbeatState } | undefined>;
  getState(accountId: string, checkId: string): Promise<HeartbeatState | undefined>;
  /** States of several checks at once (for list views). */
  getStates(accountId: string, checkIds: readonly string[]): Promise<Map<string, HeartbeatState>>;
  /**
   * Records a ping by token: one event (RECEIVED or LATE) and the next deadline, atomically.
   * Undefined when no heartbeat has this token.
   */
  recordPing(pingToken: string, ping: PingInput): Promise<HeartbeatEvent | undefined>;
  /** Records FAILING for every heartbeat whose deadline is at or before nowMs; returns them. */
  failOverdue(nowMs: number): Promise<HeartbeatEvent[]>;
  /** The earliest pending deadline, for the monitor's timer. */
  nextDeadlineMs(): Promise<number | null>;
  /** Newest first, within [fromMs, toMs]. */
  listEvents(
    accountId: string,
    checkId: string,
    opts: { fromMs: number; toMs: number; limit: number },
  ): Promise<HeartbeatEvent[]>;
  getEvent(accountId: string, checkId: string, eventId: string): Promise<HeartbeatEvent | undefined>;
  /** How many events fall in [fromMs, toMs), and how many of them are pings (RECEIVED or LATE). */
  countEvents(
    accountId: string,
    checkId: string,
    fromMs: number,
    toMs: number,
  ): Promise<{ total: number; pings: number }>;
}

// ---------------------------------------------------------------------------------------------
// Dashboards

export interface DashboardKeyRecord {
  id: string;
  maskedKey: string;
  createdAt: string;
  updatedAt: string | null;
}

export interface StoredDashboard {
  /** Numeric, as the reference's `id`; `dashboardId` is its decimal string. */
  id: number;
  accountId: string;
  /** Every DashboardCreate property as accepted (defaults filled), minus keys. */
  body: Record<string, unknown>;
  keys: DashboardKeyRecord[];
  /** Set only on the answer of the create/update that made a viewer key: its raw value, shown once. */
  newKey?: { id: string; rawKey: string };
  createdAt: string;
  updatedAt: string | null;
}

export interface DashboardInput {
  body: Record<string, unknown>;
  /** Lower-cased (and for domains, host-only) forms of customUrl/customDomain; null when unset. */
  customUrlKey: string | null;
  customDomainKey: string | null;
  /** A private dashboard gets one viewer key; only its hash and masked form are stored. */
  isPrivate: boolean;
}

export interface DashboardRepo {
  /** Throws ConflictError when customUrl or customDomain is taken by any dashboard of any account. */
  create(accountId: string, input: DashboardInput): Promise<StoredDashboard>;
  update(accountId: string, id: number, input: DashboardInput): Promise<StoredDashboard | undefined>;
  get(accountId: string, id: number): Promise<StoredDashboard | undefined>;
  /** By the normalized customUrl or customDomain (see DashboardInput), within the account. */
  getByAddress(
    accountId: string,
    kind: 'customUrl' | 'customDomain',
    key: string,
  ): Promise<StoredDashboard | undefined>;
  list(accountId: string, opts: { limit: number; page: number }): Promise<StoredDashboard[]>;
  delete(accountId: string, id: number): Promise<boolean>;
  /**
   * The dashboard at a public address, whatever its account (addresses are unique across accounts):
   * for serving its page. `key` normalized as in DashboardInput.
   */
  findByAddress(kind: 'customUrl' | 'customDomain', key: string): Promise<StoredDashboard | undefined>;
  /** Whether `rawKey` is one of the dashboard's viewer keys. */
  hasViewerKey(dashboardId: number, rawKey: string): Promise<boolean>;
}

// ---------------------------------------------------------------------------------------------
// Dashboard incidents

export const DASHBOARD_INCIDENT_IMPACTS = ['MAINTENANCE', 'MAJOR', 'MINOR'] as const;
export type DashboardIncidentImpact = (typeof DASHBOARD_INCIDENT_IMPACTS)[number];
export const DASHBOARD_INCIDENT_UPDATE_STATUSES = [
  'INVESTIGATING',
  'IDENTIFIED',
  'MONITORING',
  'RESOLVED',
  'MAINTENANCE',
] as const;
export type DashboardIncidentUpdateStatus = (typeof DASHBOARD_INCIDENT_UPDATE_STATUSES)[number];

export interface DashboardIncidentUpdate {
  id: string;
  incidentId: string;
  status: DashboardIncidentUpdateStatus;
  description: string;
  createdAt: string;
  updatedAt: string | null;
}

export interface DashboardIncident {
  id: string;
  accountId: string;
  dashboardId: number;
  name: string;
  impact: DashboardIncidentImpact;
  startedAt: string | null;
  stoppedAt: string | null;
  createdAt: string;
  updatedAt: string | null;
}

export interface DashboardIncidentFields {
  name: string;
  impact: DashboardIncidentImpact;
  startedAt: string | null;
  stoppedAt: string | null;
}

export type DeleteUpdateResult = 'deleted' | 'not-found' | 'last-update';

export interface DashboardIncidentRepo {
  /** Creates the incident with its first update in one transaction. */
  create(
    accountId: string,
    dashboardId: number,
    fields: DashboardIncidentFields,
    update: { status: DashboardIncidentUpdateStatus; description: string },
  ): Promise<{ incident: DashboardIncident; updates: DashboardIncidentUpdate[] }>;
  get(accountId: string, id: string): Promise<DashboardIncident | undefined>;
  update(accountId: string, id: string, fields: DashboardIncidentFields): Promise<DashboardIncident | undefined>;
  delete(accountId: string, id: string): Promise<boolean>;
  /** Newest first; `limit` undefined means all of them. */
  listUpdates(accountId: string, incidentId: string, limit?: number): Promise<DashboardIncidentUpdate[]>;
  addUpdate(
    accountId: string,
    incidentId: string,
    update: { status: DashboardIncidentUpdateStatus; description: string },
  ): Promise<DashboardIncidentUpdate | undefined>;
  editUpdate(
    accountId: string,
    incidentId: string,
    updateId: string,
    description: string,
  ): Promise<DashboardIncidentUpdate | undefined>;
  /** The dashboard's incidents active at `at` (started, not yet stopped), newest first, each with its latest update. */
  listActive(
    accountId: string,
    dashboardId: number,
    at: string,
  ): Promise<Array<{ incident: DashboardIncident; latest: DashboardIncidentUpdate | undefined }>>;
  /** Refuses to delete an incident's only update: an incident always has at least one. */
  deleteUpdate(accountId: string, incidentId: string, updateId: string): Promise<DeleteUpdateResult>;
}
