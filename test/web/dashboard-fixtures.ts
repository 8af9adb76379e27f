/**
 * What the dashboard tests build on: checks made through the public API, and results stored the way
 * an agent's are, through the dispatcher (a run enqueued, its result submitted), so the check's
 * status and statistics move exactly as in production.
 */
import type { Job, RunResult } from '../../src/shared/protocol.ts';
import { resultFor } from '../helpers/dispatch-harness.ts';
import type { TestAccount } from '../helpers/public-api.ts';
import type { WebService } from '../helpers/web-service.ts';

export interface DashboardView {
  id: number;
  customUrl: string | null;
  keys: Array<{ id: string; rawKey?: string; maskedKey: string }>;
}

export function dashboardFixtures(web: () => WebService) {
  async function location(account: TestAccount, slugName = 'office'): Promise<void> {
    await web().api(account, 'POST', '/v1/private-locations', { name: slugName, slugName });
  }

  async function check(
    account: TestAccount,
    name: string,
    tags: string[],
    extra: Record<string, unknown> = {},
  ): Promise<string> {
    const body = {
      name,
      tags,
      activated: true,
      privateLocations: ['office'],
      request: { url: 'https://example.test/', method: 'GET' },
      ...extra,
    };
    return (await web().api<{ id: string }>(account, 'POST', '/v1/checks/api', body)).id;
  }

  async function dashboard(account: TestAccount, body: Record<string, unknown>): Promise<DashboardView> {
    return web().api<DashboardView>(account, 'POST', '/v1/dashboards', body);
  }

  /** Stores one result for the check as its agent would: through the dispatcher. */
  async function result(account: TestAccount, checkId: string, outcome: Partial<RunResult> = {}): Promise<void> {
    const { store, dispatcher } = web().service;
    const stored = await store.checks.get(account.accountId, checkId);
    const loc = await store.locations.getBySlug(account.accountId, 'office');
    if (!stored || !loc) throw new Error(`no check ${checkId} or no office location`);
    const run = await dispatcher.enqueue(stored, loc.id, Date.now());
    // resultFor reads only runId and check (id, checkType), which a queued Run carries as a Job does.
    const payload = resultFor(run as unknown as Job, 'test-agent', { responseTime: 100, ...outcome });
    const answer = await dispatcher.submitResult(loc, {
      agentId: 'test-agent',
      leaseId: 'test-lease',
      result: payload,
    });
    if (answer.status !== 'stored') throw new Error(`result not stored: ${answer.status}`);
  }

  return { location, check, dashboard, result };
}
