/**
 * The SQLite backend of the Store: one database file in DATA_DIR, opened once per process.
 * node:sqlite is synchronous, which makes multi-statement operations inside one repository method
 * atomic for free within this process; WAL plus busy_timeout handles a second process (the CLI).
 */
import { SecretBox } from '../../secrets/box.ts';
import { defaultSecretsKeyConfig, loadSecretsKey, type SecretsKeyConfig } from '../../secrets/key.ts';
import type { Store } from '../store.ts';
import { AccountChanges } from './account-changes.ts';
import { SqliteAccountSettingsRepo } from './account-settings.ts';
import { SqliteAccountRepo } from './accounts.ts';
import { SqliteAgentRepo } from './agents.ts';
import { SqliteAlertChannelRepo } from './alert-channels.ts';
import { SqliteAlertNotificationRepo } from './alert-notifications.ts';
import { SqliteArtifactRepo } from './artifacts.ts';
import { SqliteBadgeRepo } from './badges.ts';
import { SqliteCheckAlertRepo } from './check-alerts.ts';
import { SqliteCheckGroupRepo } from './check-groups.ts';
import { SqliteCheckStatsRepo } from './check-stats.ts';
import { SqliteCheckStatusRepo } from './check-statuses.ts';
import { SqliteCheckRepo } from './checks.ts';
import { SqliteConsoleSessionRepo } from './console-sessions.ts';
import { SqliteDashboardIncidentRepo } from './dashboard-incidents.ts';
import { SqliteDashboardRepo } from './dashboards.ts';
import { inTransaction, openDatabase } from './db.ts';
import { SqliteErrorReportRepo } from './error-reports.ts';
import { SqliteHeartbeatRepo } from './heartbeats.ts';
import { SqliteIncidentRepo } from './incidents.ts';
import { SqliteLocationRepo } from './locations.ts';
import { SqliteMaintenanceWindowRepo } from './maintenance-windows.ts';
import { MIGRATIONS, pendingMigrations, runMigrations } from './migrations/index.ts';
import { SqliteOutboxRepo } from './outbox.ts';
import { SqliteResultRepo } from './results.ts';
import { SqliteRunRetryRepo } from './run-retries.ts';
import { SqliteRunRepo } from './runs.ts';
import { SqliteSnippetRepo } from './snippets.ts';
import { SqliteStatusPageKeyRepo } from './status-page-keys.ts';
import { SqliteStatusPageReadRepo } from './status-page-reads.ts';
import { SqliteSpServiceRepo, SqliteStatusPageRepo } from './status-pages.ts';
import { SqliteSubscriptionRepo } from './subscriptions.ts';
import { SqliteVariableRepo, verifySecretsMarker } from './variables.ts';

export interface SqliteStoreOptions {
  /**
   * Where the key that seals secrets comes from (src/service/secrets/key.ts). Given (the service):
   * the key is loaded and checked against the database now, so a wrong key stops the start with a
   * ConfigError. Absent (the CLI, tests): the key file in dataDir, loaded on the first secret.
   */
  secrets?: SecretsKeyConfig;
}

export async function openSqliteStore(dataDir: string, opts: SqliteStoreOptions = {}): Promise<Store> {
  const db = openDatabase(dataDir);
  let secrets: SecretBox;
  try {
    secrets = secretBoxFor(db, opts.secrets ?? defaultSecretsKeyConfig(dataDir));
    const applied = runMigrations(db, MIGRATIONS, { secrets });
    // A migration may have rewritten secrets (009 sealed plain ones): move the new pages into the
    // main file now, so the old page images do not linger there until some later checkpoint.
    if (applied.length > 0) db.exec('PRAGMA wal_checkpoint(TRUNCATE)');
    if (opts.secrets) secrets.ready();
  } catch (err) {
    db.close();
    throw err;
  }
  const checks = new SqliteCheckRepo(db, secrets);
  const dashboardChanges = new AccountChanges();
  const checkStats = new SqliteCheckStatsRepo(db, dashboardChanges);
  const statusPages = new SqliteStatusPageRepo(db);
  let closed = false;
  return {
    accounts: new SqliteAccountRepo(db),
    locations: new SqliteLocationRepo(db),
    checks,
    results: new SqliteResultRepo(db, checkStats),
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
    checkGroups: new SqliteCheckGroupRepo(db, secrets),
    variables: new SqliteVariableRepo(db, secrets),
    snippets: new SqliteSnippetRepo(db),
    checkStatuses: new SqliteCheckStatusRepo(db, dashboardChanges),
    checkAlerts: new SqliteCheckAlertRepo(db),
    alertChannels: new SqliteAlertChannelRepo(db, secrets),
    alertNotifications: new SqliteAlertNotificationRepo(db),
    secrets,
    runRetries: new SqliteRunRetryRepo(db),
    artifacts: new SqliteArtifactRepo(db),
    maintenanceWindows: new SqliteMaintenanceWindowRepo(db),
    accountSettings: new SqliteAccountSettingsRepo(db),
    badges: new SqliteBadgeRepo(db),
    consoleSessions: new SqliteConsoleSessionRepo(db),
    transaction: (fn) => inTransaction(db, fn),
    async ping() {
      const pending = pendingMigrations(db).length;
      if (pending === 0) return { ready: true };
      return { ready: false, reason: `${pending} database migration${pending === 1 ? ' is' : 's are'} not applied yet` };
    },
    async close() {
      // Idempotent: service shutdown and test teardown may both close.
      if (closed) return;
      closed = true;
      db.close();
    },
  };
}

/** The store's SecretBox: the key loads on first use and is then checked against the database's marker. */
function secretBoxFor(db: ReturnType<typeof openDatabase>, config: SecretsKeyConfig): SecretBox {
  const description = config.key !== undefined ? 'SECRETS_KEY' : `the key file ${config.keyFile}`;
  const setting = config.key !== undefined ? 'SECRETS_KEY' : 'SECRETS_KEY_FILE';
  const box: SecretBox = new SecretBox(() => {
    const key = loadSecretsKey(config);
    // The marker check needs the key id, so it runs on a box that already has the key.
    verifySecretsMarker(db, new SecretBox(key), { setting, description });
    return key;
  });
  return box;
}
