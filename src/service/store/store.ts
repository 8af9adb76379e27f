/**
 * The service's storage, as one interface of repositories. Routes and the dispatcher only ever see
 * this interface, so a PostgreSQL backend can be added beside ./sqlite/ without touching them.
 *
 * Every method is async even though node:sqlite is synchronous: a networked backend must fit the
 * same interface. Operations that must be atomic (claiming a run, storing a result once) are single
 * repository methods, so no transaction ever spans an await in a caller.
 *
 * Conventions: ids are UUID strings; times are ISO 8601 strings in UTC; every account-owned read
 * takes the accountId, so one account can never reach another's rows by id.
 */
import type { CheckClass, CheckDefinition, CheckType } from '../../shared/checks/types.ts';
import type { RunResult } from '../../shared/protocol.ts';
import type { AgentRegistration } from './dispatch-types.ts';

export interface Account {
  id: string;
  name: string;
  createdAt: string;
}

export interface ApiKeyRecord {
  id: string;
  accountId: string;
  /** e.g. "ok_live_ab12…f9" — enough to tell keys apart, never enough to use one. */
  maskedKey: string;
  createdAt: string;
}

export interface AccountRepo {
  /** Creates an account and its first API key; the caller gets the raw key once. */
  create(name: string): Promise<{ account: Account; apiKey: string }>;
  get(accountId: string): Promise<Account | undefined>;
  /** Resolves a raw user API key (hashes it and looks it up); undefined when unknown or revoked. */
  findAccountByApiKey(rawKey: string): Promise<Account | undefined>;
  createApiKey(accountId: string): Promise<{ record: ApiKeyRecord; apiKey: string }>;
  listApiKeys(accountId: string): Promise<ApiKeyRecord[]>;
  revokeApiKey(accountId: string, keyId: string): Promise<boolean>;
}

export interface PrivateLocation {
  id: string;
  accountId: string;
  name: string;
  slugName: string;
  icon: string;
  proxyUrl: string | null;
  createdAt: string;
  updatedAt: string | null;
}

export interface LocationKeyRecord {
  id: string;
  locationId: string;
  maskedKey: string;
  createdAt: string;
  updatedAt: string | null;
}

export interface LocationRepo {
  create(
    accountId: string,
    input: { name: string; slugName: string; icon: string; proxyUrl: string | null },
  ): Promise<PrivateLocation>;
  update(
    accountId: string,
    id: string,
    input: { name: string; icon: string; proxyUrl: string | null },
  ): Promise<PrivateLocation | undefined>;
  get(accountId: string, id: string): Promise<PrivateLocation | undefined>;
  getBySlug(accountId: string, slugName: string): Promise<PrivateLocation | undefined>;
  /** Internal lookup for the dispatcher, not account-scoped. */
  getById(id: string): Promise<PrivateLocation | undefined>;
  list(accountId: string): Promise<PrivateLocation[]>;
  delete(accountId: string, id: string): Promise<boolean>;
  /** Adds a key (raw value returned once). Fails with a typed error when two keys are already active. */
  createKey(accountId: string, locationId: string): Promise<{ record: LocationKeyRecord; rawKey: string }>;
  listKeys(locationId: string): Promise<LocationKeyRecord[]>;
  deleteKey(accountId: string, locationId: string, keyId: string): Promise<boolean>;
  /** Resolves a raw `pl_…` key to its location; undefined when unknown or revoked. */
  findByKey(rawKey: string): Promise<PrivateLocation | undefined>;
}

export interface StoredCheck {
  id: string;
  accountId: string;
  checkType: CheckType | 'HEARTBEAT';
  name: string;
  activated: boolean;
  muted: boolean;
  /** Minutes; 0 means sub-minute and frequencyOffset holds the seconds (10, 20 or 30). */
  frequency: number;
  frequencyOffset: number | null;
  /** Ids of the private locations it runs on. */
  locationIds: string[];
  /** The full body as accepted (defaults filled), as returned by GET. */
  body: Record<string, unknown>;
  createdAt: string;
  updatedAt: string | null;
}

/** What a list of many checks needs to show each (a dashboard): no body, no secrets opened. */
export interface CheckSummary {
  id: string;
  name: string;
  checkType: StoredCheck['checkType'];
  activated: boolean;
  tags: string[];
  groupName: string | null;
  /** Its latest counted result, as its check status holds it; null before the first. */
  lastRun: { failed: boolean; degraded: boolean; location: string | null; resultId: string; at: string | null } | null;
}

/** Filters of a check list (GET /v1/checks and /v2/checks); paging applies after them. */
export interface CheckListFilter {
  checkType?: StoredCheck['checkType'];
  /** Checks with at least one of these tags. */
  tags?: string[];
  /** Case-insensitive part of the name. */
  search?: string;
  /** Case-insensitive part of an API check's request URL; other types never match. */
  urlContains?: string;
  /** The check's current status (check_statuses); a check that has not run yet has none. */
  status?: 'passing' | 'failing' | 'degraded';
}

export interface CheckRepo {
  create(check: Omit<StoredCheck, 'id' | 'createdAt' | 'updatedAt'>): Promise<StoredCheck>;
  update(
    accountId: string,
    id: string,
    check: Omit<StoredCheck, 'id' | 'accountId' | 'createdAt' | 'updatedAt'>,
  ): Promise<StoredCheck | undefined>;
  get(accountId: string, id: string): Promise<StoredCheck | undefined>;
  /** The account's checks among `ids`, by id, in one read; ids of no check of the account are absent. */
  getMany(accountId: string, ids: readonly string[]): Promise<Map<string, StoredCheck>>;
  list(accountId: string, opts: { limit: number; page: number } & CheckListFilter): Promise<StoredCheck[]>;
  delete(accountId: string, id: string): Promise<boolean>;
  /** Every check of the account, in creation order, as a summary with its status, in one read. */
  listSummaries(accountId: string): Promise<CheckSummary[]>;
  /** Every activated check assigned to at least one private location or in a group (whose locations may apply), for the scheduler. */
  listSchedulable(): Promise<StoredCheck[]>;
}

/** One stored check result. `payload` is what the agent measured; the rest the service adds. */
export interface StoredResult {
  id: string;
  accountId: string;
  checkId: string;
  runId: string;
  checkName: string;
  locationId: string;
  runLocation: string;
  attempts: number;
  /** ATTEMPT: a failed try that was retried; FINAL: the last of its retry chain (absent means FINAL). */
  resultType?: 'FINAL' | 'ATTEMPT';
  createdAt: string;
  payload: RunResult;
}

/** A result to store. */
export interface NewResult extends Omit<StoredResult, 'id' | 'createdAt'> {
  /** When it was stored; now by default. The dispatcher passes its clock's time. */
  createdAt?: string;
  /**
   * Set when the result is still to be applied to its check's status (CheckStatusRepo.applyResult):
   * it is marked pending in the same transaction, so a crash before the status update leaves it to
   * be replayed. `dueAt`: its run's due time, the state machine's run key.
   */
  pendingStatus?: { dueAt: string };
}

/** A stored result still to be applied to its check's status. */
export interface StatusPendingResult extends StoredResult {
  sequence: number;
  dueAt: string;
}

export interface ResultRepo {
  /**
   * Stores a result unless one exists for the run already (idempotent by runId, also under races:
   * a unique index decides). Returns which happened and the id of the stored row.
   */
  insertOnce(result: NewResult): Promise<{ status: 'stored' | 'duplicate'; id: string }>;
  /** Results still pending their status update, in storage order: after `afterSequence`, stored before `storedBefore`. */
  listStatusPending(opts: {
    limit: number;
    afterSequence?: number;
    storedBefore?: string;
  }): Promise<StatusPendingResult[]>;
  /** Newest first; `nextId` is an opaque cursor, null on the last page. `resultType` ALL (the default) lists both. */
  list(
    accountId: string,
    checkId: string,
    opts: { limit: number; nextId?: string; resultType?: 'FINAL' | 'ATTEMPT' | 'ALL' },
  ): Promise<{ entries: StoredResult[]; nextId: string | null }>;
  /** One result of the account's check; undefined when it is another check's or account's. */
  get(accountId: string, checkId: string, resultId: string): Promise<StoredResult | undefined>;
  countForRun(runId: string): Promise<number>;
  /** The newest `perCheck` final results of each of the account's checks, newest first within a check. */
  recentByCheck(accountId: string, perCheck: number): Promise<RecentResult[]>;
}

/** What a listing of many checks shows of one recent result. */
export interface RecentResult {
  id: string;
  checkId: string;
  createdAt: string;
  responseTime: number;
  hasFailures: boolean;
  hasErrors: boolean;
  isDegraded: boolean;
}

export type RunState = 'queued' | 'leased' | 'completed' | 'expired' | 'cancelled';

export interface Run {
  runId: string;
  accountId: string;
  checkId: string;
  locationId: string;
  checkType: CheckType;
  checkClass: CheckClass;
  dueAt: string;
  state: RunState;
  leaseId: string | null;
  agentId: string | null;
  leaseExpiresAt: string | null;
  leaseAttempt: number;
  cancelRequested: boolean;
  /** Why a run ended without a result (expired in the queue, cancelled, superseded). */
  endReason: string | null;
  timeoutMs: number;
  check: CheckDefinition;
  createdAt: string;
  finishedAt: string | null;
  /** The check session it runs for; null (or absent) for a scheduled, retried or triggered run. */
  sessionId?: string | null;
}

/** An agent as the store keeps it: what it registered with, and when it was seen. */
export interface Agent extends AgentRegistration {
  registeredAt: string;
  lastSeenAt: string;
  /** Set when it deregistered on shutdown. */
  goneAt: string | null;
}

export interface ErrorReport {
  id: string;
  locationId: string;
  receivedAt: string;
  /** The Sentry event as received (message, exception, release, platform, contexts.runtime). */
  event: Record<string, unknown>;
}

/** What the service's readiness probe learns from the database (Store.ping). */
export type StorePing = { ready: true } | { ready: false; reason: string };

export interface Store {
  accounts: AccountRepo;
  locations: LocationRepo;
  checks: CheckRepo;
  results: ResultRepo;
  /** Runs, agents and error reports: the dispatcher's repositories, see ./dispatch-types.ts. */
  runs: import('./dispatch-types.ts').RunRepo;
  /** Where each (check, location) pair's schedule stands: see ./dispatch-types.ts. */
  scheduleCursors: import('./dispatch-types.ts').ScheduleCursorRepo;
  agents: import('./dispatch-types.ts').AgentRepo;
  errorReports: import('./dispatch-types.ts').ErrorReportRepo;
  /** Each location's queue size and oldest queued age, a sample a minute (private location metrics). */
  locationMetrics: import('./dispatch-types.ts').LocationMetricsRepo;
  /** Status pages, services, incidents, subscriptions and the notification outbox: see ./status-pages-types.ts. */
  statusPages: import('./status-pages-types.ts').StatusPageRepo;
  statusPageServices: import('./status-pages-types.ts').SpServiceRepo;
  incidents: import('./status-pages-types.ts').IncidentRepo;
  subscriptions: import('./status-pages-types.ts').SubscriptionRepo;
  outbox: import('./status-pages-types.ts').OutboxRepo;
  /** The public status pages' reads and their reader keys: see ./status-page-web-types.ts. */
  statusPageReads: import('./status-page-web-types.ts').StatusPageReadRepo;
  statusPageKeys: import('./status-page-web-types.ts').StatusPageKeyRepo;
  /** Heartbeats, dashboards and dashboard incidents: see ./heartbeat-dashboard-types.ts. */
  heartbeats: import('./heartbeat-dashboard-types.ts').HeartbeatRepo;
  dashboards: import('./heartbeat-dashboard-types.ts').DashboardRepo;
  dashboardIncidents: import('./heartbeat-dashboard-types.ts').DashboardIncidentRepo;
  /** Check groups with their trigger tokens, and the retry bookkeeping of runs: see ./check-group-types.ts. */
  checkGroups: import('./check-group-types.ts').CheckGroupRepo;
  runRetries: import('./check-group-types.ts').RunRetryRepo;
  /** Check trigger tokens (the URL that runs a check now): see ./check-trigger-types.ts. */
  checkTriggers: import('./check-trigger-types.ts').CheckTriggerRepo;
  /** Artifact metadata (the bytes are in an ArtifactBlobStore): see ./artifact-types.ts. */
  artifacts: import('./artifact-types.ts').ArtifactRepo;
  /** Account environment variables and snippets: see ./variables-types.ts. */
  variables: import('./variables-types.ts').VariableRepo;
  snippets: import('./variables-types.ts').SnippetRepo;
  /** Client certificates for mutual TLS, keys sealed: see ./client-certificate-types.ts. */
  clientCertificates: import('./client-certificate-types.ts').ClientCertificateRepo;
  /** Check statuses with their alerting state, and the check alert history: see ./check-status-types.ts. */
  checkStatuses: import('./check-status-types.ts').CheckStatusRepo;
  checkAlerts: import('./check-status-types.ts').CheckAlertRepo;
  /** Per-check runs, availability and response-time percentiles over a day: see ./check-stats-types.ts. */
  checkStats: import('./check-stats-types.ts').CheckStatsRepo;
  /** The analytics and reporting reads over the hourly rollups, and the retention deletes: see ./analytics-types.ts. */
  analytics: import('./analytics-types.ts').AnalyticsRepo;
  retention: import('./analytics-types.ts').RetentionRepo;
  /** Moves on every counted result and status this process stores, per account: a cache key for dashboards. */
  dashboardChanges: import('./check-stats-types.ts').AccountChangeCount;

  alertChannels: import('./alert-channel-types.ts').AlertChannelRepo;
  alertNotifications: import('./alert-notification-types.ts').AlertNotificationRepo;
  /** Maintenance windows: see ./maintenance-window-types.ts. */
  maintenanceWindows: import('./maintenance-window-types.ts').MaintenanceWindowRepo;
  /** Account settings (badges on or off) and the reads behind status badges: see ./account-settings-types.ts. */
  accountSettings: import('./account-settings-types.ts').AccountSettingsRepo;
  badges: import('./account-settings-types.ts').BadgeRepo;
  /** Check sessions (on-demand runs) and the runs they remember: see ./check-session-types.ts. */
  checkSessions: import('./check-session-types.ts').CheckSessionRepo;
  /** Sessions of the operator console: see ./console-session-types.ts. */
  consoleSessions: import('./console-session-types.ts').ConsoleSessionRepo;
  /** Seals and opens secret values at rest (src/service/secrets/); the repositories use it, so do the dispatcher's run snapshots. */
  secrets: import('../secrets/box.ts').SecretBox;
  /**
   * Runs fn in one transaction (BEGIN IMMEDIATE on SQLite, SERIALIZABLE on PostgreSQL unless `options`
   * say otherwise); repositories called inside join it.
   */
  transaction<T>(fn: () => Promise<T>, options?: import('./sql/database.ts').TransactionOptions): Promise<T>;
  /**
   * A trivial query for the readiness probe: whether every migration this code knows is applied.
   * Rejects when the database does not answer (closed, unreachable).
   */
  ping(): Promise<StorePing>;
  close(): Promise<void>;
}
