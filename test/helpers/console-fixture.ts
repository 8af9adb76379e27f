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
  const location = await web.api<ConsoleTenant['location'] & { keys: { rawKey?: string }[] }>(
    account,
    'POST',
    '/v1/private-locations',
    {
      name: `${name} office`,
      slugName,
    },
  );
  const locationKey = location.keys[0]?.rawKey;
  if (!locationKey) throw new Error('the location was created without its key');
  const tenant = { account, location, locationKey, agentId: crypto.randomUUID() };
  await agentPost(web, tenant, AGENT_PATHS.register, registrationBody(tenant.agentId));
  return tenant;
}

/**
 * An activated API check at the tenant's location. A new check runs once at once (the scheduler),
 * and then not again within a test's time: that first run is answered with `opts.firstResult`.
 */
export async function createApiCheck(
  web: WebService,
  tenant: ConsoleTenant,
  name: string,
  opts: { tags?: string[]; firstResult?: Partial<RunResult>; body?: Record<string, unknown> } = {},
): Promise<{ id: string }> {
  const check = await web.api<{ id: string }>(tenant.account, 'POST', '/v1/checks/api', {
    name,
    tags: opts.tags ?? [],
    frequency: 1440,
    privateLocations: [tenant.location.slugName],
    request: { method: 'GET', url: 'http://127.0.0.1:9/' },
    ...opts.body,
  });
  await answerNextRun(web, tenant, check.id, opts.firstResult ?? {});
  return check;
}

/** Runs the check once more now: enqueued, leased and answered with `result` by the tenant's agent. */
export async function runCheck(
  web: WebService,
  tenant: ConsoleTenant,
  checkId: string,
  result: Partial<RunResult> = {},
): Promise<void> {
  const check = await web.service.store.checks.get(tenant.account.accountId, checkId);
  if (!check) throw new Error(`no check ${checkId}`);
  await web.service.dispatcher.enqueue(check, tenant.location.id, Date.now());
  await answerNextRun(web, tenant, checkId, result);
}

/** Leases the next run the tenant's agent is offered, waiting for one to be queued, and holds it. */
export async function leaseNextRun(web: WebService, tenant: ConsoleTenant): Promise<Job | undefined> {
  const lease = { agentId: tenant.agentId, slots: { uptime: 1, heavy: 0 }, waitSeconds: 10 };
  const { jobs } = await agentPost<{ jobs: Job[] }>(web, tenant, AGENT_PATHS.lease, lease);
  return jobs[0];
}

/** Leases the next run and answers it; it must be a run of `checkId`. */
async function answerNextRun(
  web: WebService,
  tenant: ConsoleTenant,
  checkId: string,
  result: Partial<RunResult>,
): Promise<void> {
  const job = await leaseNextRun(web, tenant);
  if (job?.check.id !== checkId) throw new Error(`expected a run of ${checkId}, leased ${job?.check.id ?? 'nothing'}`);
  await agentPost(web, tenant, AGENT_PATHS.results, {
    agentId: tenant.agentId,
    leaseId: job.leaseId,
    result: resultFor(job, tenant.agentId, result),
  });
}
