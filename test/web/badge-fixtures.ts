/**
 * Checks, groups and results for the badge tests, over the real service: checks and groups through
 * the public API, results stored and applied to the check's status as the dispatcher does.
 */
import { CheckStatusService } from '../../src/service/alerting/status-service.ts';
import type { TestAccount } from '../helpers/public-api.ts';
import type { WebService } from '../helpers/web-service.ts';
import { passingRunResult } from '../support/results-run-result.ts';

export interface Outcome {
  hasFailures?: boolean;
  isDegraded?: boolean;
  responseTime?: number;
}

export async function enableBadges(web: WebService, account: TestAccount, on = true): Promise<void> {
  await web.api(account, 'PUT', '/v1/account/settings', { badgesEnabled: on });
}

export async function createCheck(
  web: WebService,
  account: TestAccount,
  name: string,
  extra: Record<string, unknown> = {},
): Promise<string> {
  const body = { name, request: { method: 'GET', url: 'http://127.0.0.1:9/' }, ...extra };
  return (await web.api<{ id: string }>(account, 'POST', '/v1/checks/api', body)).id;
}

export async function createGroup(
  web: WebService,
  account: TestAccount,
  name: string,
  extra: Record<string, unknown> = {},
): Promise<number> {
  return (await web.api<{ id: number }>(account, 'POST', '/v2/check-groups', { name, ...extra })).id;
}

/** Stores a FINAL result of the check with this outcome and applies it to the check's status. */
export async function recordResult(
  web: WebService,
  account: TestAccount,
  checkId: string,
  outcome: Outcome,
): Promise<void> {
  const { store } = web.service;
  const check = await store.checks.get(account.accountId, checkId);
  if (!check) throw new Error(`no check ${checkId}`);
  const at = new Date().toISOString();
  const result = passingRunResult({
    runId: crypto.randomUUID(),
    checkId,
    startedAt: at,
    stoppedAt: at,
    responseTime: outcome.responseTime ?? 100,
    hasFailures: outcome.hasFailures ?? false,
    isDegraded: outcome.isDegraded ?? false,
    error: outcome.hasFailures ? 'status 500' : null,
    agent: { id: 'badge-agent', version: '0.0.0' },
  });
  const run = { accountId: check.accountId, checkId, dueAt: at, locationId: '', checkType: 'API' as const };
  const stored = await store.results.insertOnce({
    accountId: check.accountId,
    checkId,
    runId: result.runId,
    checkName: check.name,
    locationId: '',
    runLocation: 'badge-dc',
    attempts: 1,
    resultType: 'FINAL',
    pendingStatus: { dueAt: at },
    payload: result,
  });
  await new CheckStatusService({ store }).resultStored({
    run,
    check,
    resultId: stored.id,
    resultType: 'FINAL',
    runLocation: 'badge-dc',
    result,
    atMs: Date.now(),
  });
}
