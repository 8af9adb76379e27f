/**
 * Checks and their results written straight into a store, for the tests and benchmarks of what is
 * read from stored results (statistics, analytics, reporting, retention). Results go through the
 * result repository's insert, the dispatcher's path, so the hourly rollups are filled as in service.
 */
import { createAccount } from '../../src/service/accounts.ts';
import type { NewResult, Store, StoredCheck } from '../../src/service/store/store.ts';
import type { RunResult } from '../../src/shared/protocol.ts';
import { passingRunResult } from './results-run-result.ts';

export interface CheckForResults {
  accountId: string;
  name: string;
  checkType?: StoredCheck['checkType'];
  tags?: string[];
  activated?: boolean;
}

/** A check run every minute at no location, unmuted (and activated unless `activated` is false). */
export function createCheckForResults(store: Store, c: CheckForResults): Promise<StoredCheck> {
  return store.checks.create({
    accountId: c.accountId,
    checkType: c.checkType ?? 'API',
    name: c.name,
    activated: c.activated ?? true,
    muted: false,
    frequency: 1,
    frequencyOffset: null,
    locationIds: [],
    body: { tags: c.tags ?? [] },
  });
}

/** A new account named `accountName` with one API check (createCheckForResults) named `checkName`. */
export async function accountWithCheck(
  store: Store,
  accountName: string,
  checkName: string,
): Promise<{ accountId: string; checkId: string }> {
  const { accountId } = await createAccount(store, accountName);
  const check = await createCheckForResults(store, { accountId, name: checkName });
  return { accountId, checkId: check.id };
}

/** A heartbeat check named nightly, expecting a ping a minute with no grace, created at `nowMs`. */
export function createNightlyHeartbeat(store: Store, accountId: string, pingToken: string, nowMs: number) {
  const check = {
    name: 'nightly',
    activated: true,
    muted: false,
    frequency: 1,
    frequencyOffset: null,
    body: { tags: [] },
  };
  return store.heartbeats.create(accountId, { check, periodMs: 60_000, graceMs: 0, pingToken }, nowMs);
}

export interface ResultToStore extends Partial<Omit<NewResult, 'payload' | 'createdAt'>> {
  accountId: string;
  checkId: string;
  /** When it was stored; now by default. */
  atMs?: number;
  /** What the run gave, over a passing run's result (passingRunResult). */
  outcome?: Partial<RunResult>;
}

/** Stores one result of the check: by default a passing FINAL result of a new run, at location `loc` named office. */
export function storeRunResult(
  store: Store,
  r: ResultToStore,
): Promise<{ status: 'stored' | 'duplicate'; id: string }> {
  const { atMs, outcome, ...row } = r;
  const runId = row.runId ?? crypto.randomUUID();
  return store.results.insertOnce({
    checkName: 'check',
    locationId: 'loc',
    runLocation: 'office',
    attempts: 1,
    resultType: 'FINAL',
    createdAt: atMs === undefined ? undefined : new Date(atMs).toISOString(),
    ...row,
    runId,
    payload: passingRunResult({ runId, checkId: r.checkId, ...outcome }),
  });
}
