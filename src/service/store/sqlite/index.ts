/**
 * The SQLite backend of the Store: one database file in DATA_DIR, opened once per process.
 * node:sqlite is synchronous, which makes multi-statement operations inside one repository method
 * atomic for free within this process; WAL plus busy_timeout handles a second process (the CLI).
 */
import type { Store } from '../store.ts';
import { SqliteAccountRepo } from './accounts.ts';
import { SqliteAgentRepo } from './agents.ts';
import { SqliteCheckGroupRepo } from './check-groups.ts';
import { SqliteCheckRepo } from './checks.ts';
import { SqliteDashboardIncidentRepo } from './dashboard-incidents.ts';
import { SqliteDashboardRepo } from './dashboards.ts';
import { inTransaction, openDatabase } from './db.ts';
import { SqliteErrorReportRepo } from './error-reports.ts';
import { SqliteHeartbeatRepo } from './heartbeats.ts';
import { SqliteIncidentRepo } from './incidents.ts';
import { SqliteLocationRepo } from './locations.ts';
import { runMigrations } from './migrations/index.ts';
import { SqliteOutboxRepo } from './outbox.ts';
import { SqliteResultRepo } from './results.ts';
import { SqliteRunRetryRepo } from './run-retries.ts';
import { SqliteRunRepo } from './runs.ts';
import { SqliteSpServiceRepo, SqliteStatusPageRepo } from './status-pages.ts';
import { SqliteSubscriptionRepo } from './subscriptions.ts';

export async function openSqliteStore(dataDir: string): Promise<Store> {
  const db = openDatabase(dataDir);
  try {
    runMigrations(db);
  } catch (err) {
    db.close();
    throw err;
  }
  const checks = new SqliteCheckRepo(db);
  let closed = false;
  return {
    accounts: new SqliteAccountRepo(db),
    locations: new SqliteLocationRepo(db),
    checks,
    results: new SqliteResultRepo(db),
    runs: new SqliteRunRepo(db),
    agents: new SqliteAgentRepo(db),
    errorReports: new SqliteErrorReportRepo(db),
    heartbeats: new SqliteHeartbeatRepo(db, checks),
    dashboards: new SqliteDashboardRepo(db),
    dashboardIncidents: new SqliteDashboardIncidentRepo(db),
    statusPages: new SqliteStatusPageRepo(db),
    statusPageServices: new SqliteSpServiceRepo(db),
    incidents: new SqliteIncidentRepo(db),
    subscriptions: new SqliteSubscriptionRepo(db),
    outbox: new SqliteOutboxRepo(db),
    checkGroups: new SqliteCheckGroupRepo(db, secrets),
    runRetries: new SqliteRunRetryRepo(db),
    transaction: (fn) => inTransaction(db, fn),
    async close() {
      // Idempotent: service shutdown and test teardown may both close.
      if (closed) return;
      closed = true;
      db.close();
    },
  };
}
