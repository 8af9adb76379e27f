/**
 * The Store's repositories over one SqlDatabase, whichever database it is.
 *
 * Repositories move to SqlDatabase one by one. Until the last has moved, those still written against
 * node:sqlite's synchronous connection are built from `legacy` (SQLite only); on PostgreSQL they are
 * stand-ins that fail with the repository's name, so a test on PostgreSQL says what is missing.
 */
import type { DatabaseSync } from 'node:sqlite';
import type { SecretBox } from '../secrets/box.ts';
import type { SqlDatabase } from './sql/database.ts';
import { AccountChanges } from './sqlite/account-changes.ts';
import { SqliteAccountSettingsRepo } from './sqlite/account-settings.ts';
import { SqlAccountRepo } from './sqlite/accounts.ts';
import { SqliteAgentRepo } from './sqlite/agents.ts';
import { SqlAlertChannelRepo } from './sqlite/alert-channels.ts';
import { SqlAlertNotificationRepo } from './sqlite/alert-notifications.ts';
import { SqliteArtifactRepo } from './sqlite/artifacts.ts';
import { SqliteBadgeRepo } from './sqlite/badges.ts';
import { SqlCheckAlertRepo } from './sqlite/check-alerts.ts';
import { SqlCheckGroupRepo } from './sqlite/check-groups.ts';
import { SqlCheckStatsRepo } from './sqlite/check-stats.ts';
import { SqlCheckStatusRepo } from './sqlite/check-statuses.ts';
import { SqlCheckRepo } from './sqlite/checks.ts';
import { SqliteConsoleSessionRepo } from './sqlite/console-sessions.ts';
import { SqliteDashboardIncidentRepo } from './sqlite/dashboard-incidents.ts';
import { SqliteDashboardRepo } from './sqlite/dashboards.ts';
import { SqliteErrorReportRepo } from './sqlite/error-reports.ts';
import { SqliteHeartbeatRepo } from './sqlite/heartbeats.ts';
import { SqliteIncidentRepo } from './sqlite/incidents.ts';
import { SqliteLocationMetricsRepo } from './sqlite/location-metrics.ts';
import { SqlLocationRepo } from './sqlite/locations.ts';
import { SqlMaintenanceWindowRepo } from './sqlite/maintenance-windows.ts';
import { SqliteOutboxRepo } from './sqlite/outbox.ts';
import { SqlResultRepo } from './sqlite/results.ts';
import { SqliteRunRetryRepo } from './sqlite/run-retries.ts';
import { SqliteRunRepo } from './sqlite/runs.ts';
import { SqliteSnippetRepo } from './sqlite/snippets.ts';
import { SqliteStatusPageKeyRepo } from './sqlite/status-page-keys.ts';
import { SqliteStatusPageReadRepo } from './sqlite/status-page-reads.ts';
import { SqliteSpServiceRepo, SqliteStatusPageRepo } from './sqlite/status-pages.ts';
import { SqliteSubscriptionRepo } from './sqlite/subscriptions.ts';
import { SqliteVariableRepo } from './sqlite/variables.ts';
import type { Store } from './store.ts';

export interface StoreParts {
  sql: SqlDatabase;
  secrets: SecretBox;
  /** The raw SQLite connection, for the repositories not yet on SqlDatabase; absent on PostgreSQL. */
  legacy?: DatabaseSync;
}

export function assembleStore({ sql, secrets, legacy }: StoreParts): Store {
  const db = legacy ?? notYetOnPostgres();
  const checks = new SqlCheckRepo(sql, secrets);
  const dashboardChanges = new AccountChanges();
  const checkStats = new SqlCheckStatsRepo(sql, dashboardChanges);
  const statusPages = new SqliteStatusPageRepo(db);
  return {
    accounts: new SqlAccountRepo(sql),
    locations: new SqlLocationRepo(sql),
    locationMetrics: new SqliteLocationMetricsRepo(db),
    checks,
    results: new SqlResultRepo(sql, checkStats),
    checkStats,
    dashboardChanges,
    runs: new SqliteRunRepo(db),
    agents: new SqliteAgentRepo(db),
    errorReports: new SqliteErrorReportRepo(db),
    heartbeats: new SqliteHeartbeatRepo(db, checks),
    dashboards: new SqliteDashboardRepo(db),
    dashboardIncidents: new SqliteDashboardIncidentRepo(db),
    statusPages,
    statusPageReads: new SqliteStatusPageReadRepo(db, statusPages),
    statusPageKeys: new SqliteStatusPageKeyRepo(db),
    statusPageServices: new SqliteSpServiceRepo(db),
    incidents: new SqliteIncidentRepo(db),
    subscriptions: new SqliteSubscriptionRepo(db, secrets),
    outbox: new SqliteOutboxRepo(db, secrets),
    checkGroups: new SqlCheckGroupRepo(sql, secrets),
    variables: new SqliteVariableRepo(db, secrets),
    snippets: new SqliteSnippetRepo(db),
    checkStatuses: new SqlCheckStatusRepo(sql, dashboardChanges),
    checkAlerts: new SqlCheckAlertRepo(sql),
    alertChannels: new SqlAlertChannelRepo(sql, secrets),
    alertNotifications: new SqlAlertNotificationRepo(sql),
    secrets,
    runRetries: new SqliteRunRetryRepo(db),
    artifacts: new SqliteArtifactRepo(db),
    maintenanceWindows: new SqlMaintenanceWindowRepo(sql),
    accountSettings: new SqliteAccountSettingsRepo(db),
    badges: new SqliteBadgeRepo(db),
    consoleSessions: new SqliteConsoleSessionRepo(db),
    transaction: (fn) => sql.transaction(fn),
    ping: () => sql.ping(),
    close: () => sql.close(),
  };
}

/**
 * A stand-in connection whose statements fail naming what is not on PostgreSQL yet. Preparing and
 * registering SQL functions succeed (some repositories do both in their constructor); running does not.
 */
function notYetOnPostgres(): DatabaseSync {
  const fail = (what: string) => () => {
    throw new Error(`a repository still written for node:sqlite used ${what} on PostgreSQL: it is not on PostgreSQL yet`);
  };
  const statement = new Proxy({}, { get: (_t, property) => fail(String(property)) });
  return new Proxy({} as DatabaseSync, {
    get: (_t, property) => (property === 'prepare' ? () => statement : property === 'function' ? () => {} : fail(String(property))),
  });
}
