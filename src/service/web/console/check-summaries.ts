/**
 * What the checks list shows of each check of an account: its state, tags, locations and recent
 * results, read in a few queries for the whole account, and the list's filters.
 */
import { Type, type Static } from 'typebox';
import { CHECK_TYPES } from '../../../shared/checks/types.ts';
import { placementOf } from '../../checks/group-of.ts';
import type { CheckStatusRecord } from '../../store/check-status-types.ts';
import type { RecentResult, Store, StoredCheck } from '../../store/store.ts';

/** Results a sparkline shows. */
export const SPARKLINE_RUNS = 20;
const PAGE = 500;

export const CHECK_STATES = [
  { value: 'passing', label: 'Passing', css: 'state-ok' },
  { value: 'degraded', label: 'Degraded', css: 'state-degraded' },
  { value: 'failing', label: 'Failing', css: 'state-down' },
  { value: 'pending', label: 'No runs yet', css: 'state-none' },
  { value: 'inactive', label: 'Deactivated', css: 'state-none' },
] as const;

export type CheckState = (typeof CHECK_STATES)[number]['value'];
export const ALL_CHECK_TYPES = [...CHECK_TYPES, 'HEARTBEAT'] as const;

/** The list's GET form: every field optional, each value one the form offers. */
export const CheckFilter = Type.Object({
  tag: Type.Optional(Type.String({ maxLength: 200 })),
  type: Type.Optional(Type.Union([Type.Literal(''), ...ALL_CHECK_TYPES.map((t) => Type.Literal(t))])),
  state: Type.Optional(Type.Union([Type.Literal(''), ...CHECK_STATES.map((s) => Type.Literal(s.value))])),
});
export type CheckFilter = Static<typeof CheckFilter>;

export interface CheckSummary {
  check: StoredCheck;
  state: CheckState;
  tags: string[];
  locationNames: string[];
  /** Newest first. */
  recent: RecentResult[];
}

/** `activated`: the check's and its group's (checks/group-of.ts placementOf). */
export function stateOf(activated: boolean, status: CheckStatusRecord | undefined): CheckState {
  if (!activated) return 'inactive';
  if (!status?.lastCheckRunId) return 'pending';
  if (status.hasFailures || status.hasErrors) return 'failing';
  return status.isDegraded ? 'degraded' : 'passing';
}

export const stateInfo = (state: CheckState) => CHECK_STATES.find((s) => s.value === state) ?? CHECK_STATES[3];

export function tagsOf(check: StoredCheck): string[] {
  const tags = check.body.tags;
  return Array.isArray(tags) ? tags.filter((t): t is string => typeof t === 'string') : [];
}

async function allChecks(store: Store, accountId: string): Promise<StoredCheck[]> {
  const checks: StoredCheck[] = [];
  for (let page = 1; ; page += 1) {
    const batch = await store.checks.list(accountId, { limit: PAGE, page });
    checks.push(...batch);
    if (batch.length < PAGE) return checks;
  }
}

export async function loadCheckSummaries(store: Store, accountId: string): Promise<CheckSummary[]> {
  const [checks, statuses, recent, locations] = await Promise.all([
    allChecks(store, accountId),
    store.checkStatuses.list(accountId),
    store.results.recentByCheck(accountId, SPARKLINE_RUNS),
    store.locations.list(accountId),
  ]);
  // Where and whether each runs, as the scheduler sees it: a check in a group may take the group's.
  const placements = await Promise.all(checks.map((check) => placementOf(store, check)));
  const statusOf = new Map(statuses.map((s) => [s.checkId, s]));
  const nameOf = new Map(locations.map((l) => [l.id, l.name]));
  const recentOf = Map.groupBy(recent, (r) => r.checkId);
  return checks.map((check, i) => {
    const placement = placements[i] ?? check;
    return {
      check,
      state: stateOf(placement.activated, statusOf.get(check.id)),
      tags: tagsOf(check),
      locationNames: placement.locationIds.map((id) => nameOf.get(id) ?? id),
      recent: recentOf.get(check.id) ?? [],
    };
  });
}

export function filterSummaries(list: readonly CheckSummary[], filter: CheckFilter): CheckSummary[] {
  return list.filter(
    (s) =>
      (!filter.tag || s.tags.includes(filter.tag)) &&
      (!filter.type || s.check.checkType === filter.type) &&
      (!filter.state || s.state === filter.state),
  );
}
