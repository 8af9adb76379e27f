/**
 * The dashboard half of `npm run bench -- pages`: seeds a public dashboard of 500 checks into a running
 * service and returns its address. It shows all its checks on one page (paginate off: the worst case;
 * paginated by 15, a page reads the figures of 15), each with a day of results every 5 minutes in its
 * statistics, a status, and an open incident. pages.ts measures it as it measures the status page.
 */
import { createAccount } from '../../src/service/accounts.ts';
import { INITIAL_STATE } from '../../src/service/alerting/state-machine.ts';
import { openSqliteDatabase } from '../../src/service/store/sql/sqlite-database.ts';
import { addToRollup } from '../../src/service/store/repos/check-stats.ts';
import type { Store } from '../../src/service/store/store.ts';
import { storeRunResult } from '../../test/support/results-in-store.ts';

const DAY_MS = 86_400_000;
const EVERY_MS = 5 * 60_000;

async function seedChecks(store: Store, accountId: string, count: number): Promise<string[]> {
  const ids: string[] = [];
  for (let i = 0; i < count; i++) {
    const check = await store.checks.create({
      accountId,
      checkType: 'API',
      name: `Service endpoint ${i}`,
      activated: true,
      muted: false,
      frequency: 5,
      frequencyOffset: null,
      locationIds: [],
      body: { tags: ['prod', i % 2 ? 'api' : 'web'] },
    });
    ids.push(check.id);
  }
  return ids;
}

/** The latest result and status of each check, through the repositories the dispatcher uses. */
async function seedStatuses(store: Store, accountId: string, ids: readonly string[]): Promise<void> {
  const atMs = Date.now();
  const at = new Date(atMs).toISOString();
  for (const [i, checkId] of ids.entries()) {
    const failing = i % 50 === 0;
    const stored = await storeRunResult(store, {
      accountId,
      checkId,
      runId: `bench-${checkId}`,
      checkName: `Service endpoint ${i}`,
      locationId: 'bench',
      atMs,
      pendingStatus: { dueAt: at },
      outcome: { responseTime: 120, hasFailures: failing },
    });
    const status = {
      hasFailures: failing,
      hasErrors: false,
      isDegraded: false,
      longestRun: 120,
      shortestRun: 120,
      lastRunLocation: 'office',
      lastCheckRunId: stored.id,
      sslDaysRemaining: null,
      alert: INITIAL_STATE,
    };
    await store.checkStatuses.applyResult(accountId, checkId, stored.id, at, () => ({
      status,
      alerts: [],
      nextReminderAt: null,
    }));
  }
}

/** A day of statistics per check, written as stored results write them, in one transaction. */
async function seedRollups(dataDir: string, accountId: string, ids: readonly string[], nowMs: number): Promise<void> {
  const db = openSqliteDatabase(dataDir);
  await db.transaction(async () => {
    for (const [i, checkId] of ids.entries()) {
      for (let t = nowMs - DAY_MS + EVERY_MS; t <= nowMs; t += EVERY_MS) {
        const responseTimeMs = 80 + ((t / EVERY_MS + i) % 17) * 9;
        await addToRollup(db, { accountId, checkId, atMs: t, failed: (t / EVERY_MS + i) % 97 === 0, responseTimeMs });
      }
    }
  });
  await db.close();
}

/** Stores one more passing result of the check (a counted result: the dashboard's figures change). */
export async function storeOneResult(store: Store, accountId: string, checkId: string, n: number): Promise<void> {
  await storeRunResult(store, {
    accountId,
    checkId,
    runId: `bench-extra-${checkId}-${n}`,
    checkName: 'extra',
    locationId: 'bench',
    outcome: { responseTime: 100 + (n % 50) },
  });
}

export interface SeededDashboard {
  url: string;
  accountId: string;
  checkIds: string[];
}

/** Seeds the dashboard into `store` (the database under `dataDir`). */
export async function seedDashboard(store: Store, dataDir: string, checks: number): Promise<SeededDashboard> {
  const { accountId } = await createAccount(store, 'Bench dashboard');
  const ids = await seedChecks(store, accountId, checks);
  await seedStatuses(store, accountId, ids);
  await seedRollups(dataDir, accountId, ids, Date.now());
  const dashboard = await store.dashboards.create(accountId, {
    body: {
      header: 'Bench',
      tags: ['prod'],
      useTagsAndOperator: false,
      paginate: false,
      checksPerPage: 20,
      paginationRate: 60,
      refreshRate: 60,
      width: 'FULL',
      sortByStatus: true,
      expandChecks: false,
      hideTags: false,
      enableIncidents: true,
      showHeader: true,
      showCheckRunLinks: true,
      showGroupNames: true,
      showP95: true,
      showP99: true,
      customCSS: '.check__name { font-weight: 700; }',
      isPrivate: false,
      customUrl: 'bench',
      customDomain: null,
    },
    customUrlKey: 'bench',
    customDomainKey: null,
    isPrivate: false,
  });
  await store.dashboardIncidents.create(
    accountId,
    dashboard.id,
    { name: 'Elevated latency', impact: 'MINOR', startedAt: new Date().toISOString(), stoppedAt: null },
    { status: 'INVESTIGATING', description: 'Looking into it' },
  );
  return { url: '/dashboards/bench', accountId, checkIds: ids };
}
