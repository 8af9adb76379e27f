/** The Store's repositories (./repos/, written once) over one SqlDatabase, whichever database it is. */
import type { SecretBox } from '../secrets/box.ts';
import { pendingMigrations } from './migrations/index.ts';
import type { SqlDatabase } from './sql/database.ts';
import { AccountChanges } from './repos/account-changes.ts';
import { SqlAccountSettingsRepo } from './repos/account-settings.ts';
import { SqlAccountRepo } from './repos/accounts.ts';
import { SqlAgentRepo } from './repos/agents.ts';
import { SqlAlertChannelRepo } from './repos/alert-channels.ts';
import { SqlAlertNotificationRepo } from './repos/alert-notifications.ts';
import { SqlArtifactRepo } from './repos/artifacts.ts';
import { SqlBadgeRepo } from './repos/badges.ts';
import { SqlCheckAlertRepo } from './repos/check-alerts.ts';
import { SqlCheckGroupRepo } from './repos/check-groups.ts';
import { SqlAnalyticsRepo } from './repos/analytics.ts';
import { SqlCheckStatsRepo } from './repos/check-stats.ts';
import { SqlCheckStatusRepo } from './repos/check-statuses.ts';
import { SqlCheckTriggerRepo } from './repos/check-triggers.ts';
import { SqlCheckRepo } from './repos/checks.ts';
import { SqlCheckSessionRepo } from './repos/check-sessions.ts';
import { SqlConsoleSessionRepo } from './repos/console-sessions.ts';
import { SqlDashboardIncidentRepo } from './repos/dashboard-incidents.ts';
import { SqlDashboardRepo } from './repos/dashboards.ts';
import { SqlErrorReportRepo } from './repos/error-reports.ts';
import { SqlHeartbeatRepo } from './repos/heartbeats.ts';
import { SqlIncidentRepo } from './repos/incidents.ts';
import { SqlLocationMetricsRepo } from './repos/location-metrics.ts';
import { SqlLocationRepo } from './repos/locations.ts';
import { SqlMaintenanceWindowRepo } from './repos/maintenance-windows.ts';
import { SqlOutboxRepo } from './repos/outbox.ts';
import { SqlResultRepo } from './repos/results.ts';
import { SqlRunRetryRepo } from './repos/run-retries.ts';
import { SqlRunRepo } from './repos/runs.ts';
import { SqlScheduleCursorRepo } from './repos/schedule-cursors.ts';
import { SqlSnippetRepo } from './repos/snippets.ts';
import { SqlClientCertificateRepo } from './repos/client-certificates.ts';
import { SqlStatusPageKeyRepo } from './repos/status-page-keys.ts';
import { SqlStatusPageReadRepo } from './repos/status-page-reads.ts';
import { SqlSpServiceRepo, SqlStatusPageRepo } from './repos/status-pages.ts';
import { SqlSubscriptionRepo } from './repos/subscriptions.ts';
import { SqlVariableRepo } from './repos/variables.ts';
import type { Store } from './store.ts';

export interface StoreParts {
  sql: SqlDatabase;
  secrets: SecretBox;
}

export function assembleStore({ sql, secrets }: StoreParts): Store {
  const checks = new SqlCheckRepo(sql, secrets);
  const dashboardChanges = new AccountChanges();
  const checkStats = new SqlCheckStatsRepo(sql, dashboardChanges);
  const statusPages = new SqlStatusPageRepo(sql);
  const analytics = new SqlAnalyticsRepo(sql);
  return {
    accounts: new SqlAccountRepo(sql),
    locations: new SqlLocationRepo(sql),
    locationMetrics: new SqlLocationMetricsRepo(sql),
    checks,
    results: new SqlResultRepo(sql, checkStats),
    checkStats,
    analytics,
    retention: analytics,
    dashboardChanges,
    runs: new SqlRunRepo(sql),
    scheduleCursors: new SqlScheduleCursorRepo(sql),
    checkSessions: new SqlCheckSessionRepo(sql),
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
    checkGroups: new SqlCheckGroupRepo(sql, secrets),
    checkTriggers: new SqlCheckTriggerRepo(sql),
    variables: new SqlVariableRepo(sql, secrets),
    snippets: new SqlSnippetRepo(sql),
    clientCertificates: new SqlClientCertificateRepo(sql, secrets),
    checkStatuses: new SqlCheckStatusRepo(sql, dashboardChanges),
    checkAlerts: new SqlCheckAlertRepo(sql),
    alertChannels: new SqlAlertChannelRepo(sql, secrets),
    alertNotifications: new SqlAlertNotificationRepo(sql),
    secrets,
    runRetries: new SqlRunRetryRepo(sql),
    artifacts: new SqlArtifactRepo(sql),
    maintenanceWindows: new SqlMaintenanceWindowRepo(sql),
    accountSettings: new SqlAccountSettingsRepo(sql),
    badges: new SqlBadgeRepo(sql),
    consoleSessions: new SqlConsoleSessionRepo(sql),
    transaction: (fn, options) => sql.transaction(fn, options),
    async ping() {
      const pending = (await pendingMigrations(sql)).length;
      if (pending === 0) return { ready: true };
      return {
        ready: false,
        reason: `${pending} database migration${pending === 1 ? ' is' : 's are'} not applied yet`,
      };
    },
    close: () => sql.close(),
  };
}
