/**
 * What a dashboard page shows, read from the store: the account's checks its tags select, each with
 * its state (from its check status) and, for the checks on the page shown, its 24-hour figures; the
 * open incidents; the page of a paginated list. Only the dashboard's own account is ever read.
 */
import type { DashboardBody } from '../../routes/dashboards.ts';
import type { CheckWindowStats } from '../../store/check-stats-types.ts';
import type {
  DashboardIncident,
  DashboardIncidentUpdate,
  StoredDashboard,
} from '../../store/heartbeat-dashboard-types.ts';
import type { CheckSummary, Store } from '../../store/store.ts';

export type CheckState = 'failing' | 'degraded' | 'passing' | 'pending' | 'paused';

export interface DashboardCheck extends CheckSummary {
  state: CheckState;
  stats: CheckWindowStats | undefined;
}

export interface DashboardData {
  id: number;
  body: DashboardBody;
  /** The checks of the page shown. */
  checks: DashboardCheck[];
  /** 1-based; pages is at least 1. */
  page: number;
  pages: number;
  counts: Record<CheckState, number>;
  total: number;
  incidents: Array<{ incident: DashboardIncident; latest: DashboardIncidentUpdate | undefined }>;
  generatedAt: string;
}

/** Failing first: the order sortByStatus shows. */
const STATE_ORDER: Record<CheckState, number> = { failing: 0, degraded: 1, passing: 2, pending: 3, paused: 4 };

/** No tags selects every check; otherwise a check needs all of them (AND) or any of them (OR). */
export function selectsCheck(tags: readonly string[], useAnd: boolean, checkTags: readonly string[]): boolean {
  if (tags.length === 0) return true;
  return useAnd ? tags.every((t) => checkTags.includes(t)) : tags.some((t) => checkTags.includes(t));
}

export function stateOf(check: CheckSummary): CheckState {
  if (!check.activated) return 'paused';
  if (!check.lastRun) return 'pending';
  if (check.lastRun.failed) return 'failing';
  return check.lastRun.degraded ? 'degraded' : 'passing';
}

/** How many checks a page holds, or undefined for one page of all of them. */
function perPage(body: DashboardBody): number | undefined {
  return body.paginate && body.checksPerPage ? body.checksPerPage : undefined;
}

async function selectedChecks(
  store: Store,
  dashboard: StoredDashboard,
  body: DashboardBody,
): Promise<DashboardCheck[]> {
  const checks = (await store.checks.listSummaries(dashboard.accountId))
    .filter((c) => selectsCheck(body.tags, body.useTagsAndOperator === true, c.tags))
    .map((c): DashboardCheck => ({ ...c, state: stateOf(c), stats: undefined }));
  // Array.prototype.sort is stable: equal states keep creation order.
  return body.sortByStatus ? checks.sort((a, b) => STATE_ORDER[a.state] - STATE_ORDER[b.state]) : checks;
}

function countStates(checks: readonly DashboardCheck[]): Record<CheckState, number> {
  const counts: Record<CheckState, number> = { failing: 0, degraded: 0, passing: 0, pending: 0, paused: 0 };
  for (const c of checks) counts[c.state] += 1;
  return counts;
}

/** The dashboard's data for page `requestedPage` (clamped to the pages there are). */
export async function loadDashboardData(
  store: Store,
  dashboard: StoredDashboard,
  requestedPage: number,
  nowMs: number,
): Promise<DashboardData> {
  const body = dashboard.body as DashboardBody;
  const all = await selectedChecks(store, dashboard, body);
  const size = perPage(body) ?? Math.max(all.length, 1);
  const pages = Math.max(1, Math.ceil(all.length / size));
  const page = Math.min(Math.max(1, Math.trunc(requestedPage) || 1), pages);
  const shown = all.slice((page - 1) * size, page * size);
  // Figures only for the checks on screen: a 500-check dashboard paginated by 15 reads 15.
  const stats = await store.checkStats.forChecks(
    dashboard.accountId,
    shown.map((c) => c.id),
    nowMs,
  );
  const generatedAt = new Date(nowMs).toISOString();
  const incidents = body.enableIncidents
    ? await store.dashboardIncidents.listActive(dashboard.accountId, dashboard.id, generatedAt)
    : [];
  return {
    id: dashboard.id,
    body,
    checks: shown.map((c) => ({ ...c, stats: stats.get(c.id) })),
    page,
    pages,
    counts: countStates(all),
    total: all.length,
    incidents: incidents.filter((i) => i.latest?.status !== 'RESOLVED'),
    generatedAt,
  };
}
