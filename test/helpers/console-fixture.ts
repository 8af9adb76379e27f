/**
 * An account set up for the console's tests through the real service: a private location with a
 * registered agent, API checks created through the public API, and results that come back through
 * the agent protocol over HTTP.
 */
import { AGENT_PATHS, type Job, type RunResult } from '../../src/shared/protocol.ts';
import { registrationBody, resultFor } from './dispatch-harness.ts';
import type { TestAccount } from './public-api.ts';
import type { WebService } from './web-service.ts';

export interface ConsoleTenant {
  account: TestAccount;
  location: { id: string; slugName: string; name: string };
  locationKey: string;
  agentId: string;
}

async function agentPost<T>(web: WebService, tenant: ConsoleTenant, path: string, body: unknown): Promise<T> {
  const res = await fetch(`${web.url}${path}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${tenant.locationKey}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  if (!res.ok) throw new Error(`${path}: ${res.status} ${await res.text()}`);
  return (await res.json()) as T;
}

export async function consoleTenant(web: WebService, name: string, slugName: string): Promise<ConsoleTenant> {
  const account = await web.newAccount(name);
  const location = await web.api<ConsoleTenant['location'] & { keys: { rawKey?: string }[] }>(account, 'POST', '/v1/private-locations', {
    name: `${name} office`,
    slugName,
  });
  const locationKey = location.keys[0]?.rawKey;
  if (!locationKey) throw new Error('the location was created without its key');
  const tenant = { account, location, locationKey, agentId: crypto.randomUUID() };
  await agentPost(web, tenant, AGENT_PATHS.register, registrationBody(tenant.agentId));
  return tenant;
}

/** An activated API check at the tenant's location (it never runs on its own schedule in a test's time). */
export async function createApiCheck(web: WebService, tenant: ConsoleTenant, name: string, tags: string[] = []): Promise<{ id: string }> {
  return web.api(tenant.account, 'POST', '/v1/checks/api', {
    name,
    tags,
    frequency: 1440,
    privateLocations: [tenant.location.slugName],
    request: { method: 'GET', url: 'http://127.0.0.1:9/' },
  });
}

/** Runs the check once now: enqueued, leased and answered with `result` by the tenant's agent. */
export async function runCheck(web: WebService, tenant: ConsoleTenant, checkId: string, result: Partial<RunResult> = {}): Promise<void> {
  const check = await web.service.store.checks.get(tenant.account.accountId, checkId);
  if (!check) throw new Error(`no check ${checkId}`);
  await web.service.dispatcher.enqueue(check, tenant.location.id, Date.now());
  const { jobs } = await agentPost<{ jobs: Job[] }>(web, tenant, AGENT_PATHS.lease, { agentId: tenant.agentId, slots: { uptime: 10, heavy: 1 }, waitSeconds: 0 });
  if (!jobs.some((job) => job.check.id === checkId)) throw new Error(`the run of ${checkId} was not leased`);
  for (const job of jobs) {
    const body = { agentId: tenant.agentId, leaseId: job.leaseId, result: resultFor(job, tenant.agentId, job.check.id === checkId ? result : {}) };
    await agentPost(web, tenant, AGENT_PATHS.results, body);
  }
}
