/**
 * The Store's repositories over one SqlDatabase, whichever database it is.
 *
 * Repositories move to SqlDatabase one by one. Until the last has moved, those still written against
 * node:sqlite's synchronous connection are built from `legacy` (SQLite only); on PostgreSQL they are
 * stand-ins that fail with the repository's name, so a test on PostgreSQL says what is missing.
 */
import type { DatabaseSync } from 'node:sqlite';
import type { SecretBox } from '../secrets/box.ts';
import { pendingMigrations } from './migrations/index.ts';
import type { SqlDatabase } from './sql/database.ts';
import { AccountChanges } from './sqlite/account-changes.ts';
import { SqlAccountSettingsRepo } from './sqlite/account-settings.ts';
import { SqlAccountRepo } from './sqlite/accounts.ts';
import { SqlAgentRepo } from './sqlite/agents.ts';
import { SqliteAlertChannelRepo } from './sqlite/alert-channels.ts';
import { SqliteAlertNotificationRepo } from './sqlite/alert-notifications.ts';
import { SqlArtifactRepo } from './sqlite/artifacts.ts';
import { SqlBadgeRepo } from './sqlite/badges.ts';
import { SqliteCheckAlertRepo } from './sqlite/check-alerts.ts';
import { SqliteCheckGroupRepo } from './sqlite/check-groups.ts';
import { SqlCheckStatsRepo } from './sqlite/check-stats.ts';
import { SqliteCheckStatusRepo } from './sqlite/check-statuses.ts';
import { SqlCheckRepo } from './sqlite/checks.ts';
import { SqlConsoleSessionRepo } from './sqlite/console-sessions.ts';
import { SqlDashboardIncidentRepo } from './sqlite/dashboard-incidents.ts';
import { SqlDashboardRepo } from './sqlite/dashboards.ts';
import { SqlErrorReportRepo } from './sqlite/error-reports.ts';
import { SqlHeartbeatRepo } from './sqlite/heartbeats.ts';
import { SqlIncidentRepo } from './sqlite/incidents.ts';
import { SqlLocationMetricsRepo } from './sqlite/location-metrics.ts';
import { SqlLocationRepo } from './sqlite/locations.ts';
import { SqliteMaintenanceWindowRepo } from './sqlite/maintenance-windows.ts';
import { SqlOutboxRepo } from './sqlite/outbox.ts';
import { SqlResultRepo } from './sqlite/results.ts';
import { SqlRunRetryRepo } from './sqlite/run-retries.ts';
import { SqlRunRepo } from './sqlite/runs.ts';
import { SqlSnippetRepo } from './sqlite/snippets.ts';
import { SqlStatusPageKeyRepo } from './sqlite/status-page-keys.ts';
import { SqlStatusPageReadRepo } from './sqlite/status-page-reads.ts';
import { SqlSpServiceRepo, SqlStatusPageRepo } from './sqlite/status-pages.ts';
import { SqlSubscriptionRepo } from './sqlite/subscriptions.ts';
import { SqlVariableRepo } from './sqlite/variables.ts';
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
  const statusPages = new SqlStatusPageRepo(sql);
  return {
    accounts: new SqlAccountRepo(sql),
    locations: new SqlLocationRepo(sql),
    locationMetrics: new SqlLocationMetricsRepo(sql),
    checks,
    results: new SqlResultRepo(sql, checkStats),
    checkStats,
    dashboardChanges,
    runs: new SqlRunRepo(sql),
    agents: new SqlAgentRepo(sql),
    errorReports: new SqlErrorReportRepo(sql),
    heartbeats: new SqlHeartbeatRepo(sql, checks),
    dashboards: new SqlDashboardRepo(sql),
    dashboardIncidents: new SqlDashboardIncidentRepo(sql),
    statusPages,
    statusPageReads: new SqlStatusPageReadRepo(sql, statusPages),
    statusPageKeys: new SqlStatusPageKeyRepo(sql),
    statusPageServices: new SqlSpServiceRepo(sql),
    incidents: new SqlIncidentRepo(sql),
    subscriptions: new SqlSubscriptionRepo(sql, secrets),
    outbox: new SqlOutboxRepo(sql, secrets),
    checkGroups: new SqliteCheckGroupRepo(db, secrets),
    variables: new SqlVariableRepo(sql, secrets),
    snippets: new SqlSnippetRepo(sql),
    checkStatuses: new SqliteCheckStatusRepo(db, dashboardChanges),
    checkAlerts: new SqliteCheckAlertRepo(db),
    alertChannels: new SqliteAlertChannelRepo(db, secrets),
    alertNotifications: new SqliteAlertNotificationRepo(db),
    secrets,
    runRetries: new SqlRunRetryRepo(sql),
    artifacts: new SqlArtifactRepo(sql),
    maintenanceWindows: new SqliteMaintenanceWindowRepo(db),
    accountSettings: new SqlAccountSettingsRepo(sql),
    badges: new SqlBadgeRepo(sql),
    consoleSessions: new SqlConsoleSessionRepo(sql),
    transaction: (fn) => sql.transaction(fn),
    async ping() {
      const pending = (await pendingMigrations(sql)).length;
      if (pending === 0) return { ready: true };
      return { ready: false, reason: `${pending} database migration${pending === 1 ? ' is' : 's are'} not applied yet` };
    },
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
