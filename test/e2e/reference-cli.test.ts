/**
 * The reference vendor's own CLI (`checkly` 8.23.2 from the npm registry) against a running service:
 * every command whose API this service serves, as docs/api.md "The reference CLI" lists them. The
 * service runs in-process on loopback; each command is a process of the real CLI, sending the
 * reference's x-checkly-account header and reading /next/accounts before it runs.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAccount } from '../../src/service/accounts.ts';
import { AGENT_PATHS, type Job, type RunResult } from '../../src/shared/protocol.ts';
import { registrationBody, resultFor } from '../helpers/dispatch-harness.ts';
import { type RunningService, startRunningService } from '../helpers/running-service.ts';
import { type CliRun, type CliTarget, installReferenceCli, runCli } from '../support/reference-cli.ts';

let running: RunningService;
let target: CliTarget;
let headers: Record<string, string>;
let checkId: string;
let pageId: string;
let channelId: number;

/** A request of the set-up, through the API as any client would. */
async function call<T>(method: string, url: string, body?: object): Promise<T> {
  const res = await fetch(`${running.baseUrl}${url}`, {
    method,
    headers,
    ...(body ? { body: JSON.stringify(body) } : {}),
  });
  const text = await res.text();
  if (!res.ok) throw new Error(`${method} ${url}: ${res.status} ${text}`);
  return (text ? JSON.parse(text) : undefined) as T;
}

/** Runs the command and expects it to succeed, showing its output when it does not. */
async function ok(...args: string[]): Promise<string> {
  const run: CliRun = await runCli(target, args);
  expect(run.exitCode, `checkly ${args.join(' ')}\n${run.stdout}\n${run.stderr}`).toBe(0);
  return run.stdout;
}

/**
 * Independent reads, two at a time: side by side they finish sooner, but more CLI processes at once
 * than a 2-core CI machine has cores only slow each other (each spends a while starting).
 */
async function inPairs(commands: string[][]): Promise<string[]> {
  const out: string[] = [];
  for (let i = 0; i < commands.length; i += 2)
    out.push(...(await Promise.all(commands.slice(i, i + 2).map((c) => ok(...c)))));
  return out;
}

/**
 * The agent of a location, speaking the agent protocol over HTTP as check-sessions.test.ts's does
 * (with the same registration and result bodies): it answers the runs of one check.
 */
async function locationAgent(slugName: string) {
  const location = await call<{ keys: Array<{ rawKey?: string }> }>('POST', '/v1/private-locations', {
    name: slugName,
    slugName,
  });
  const key = location.keys[0]?.rawKey ?? '';
  const agentId = crypto.randomUUID();
  const post = async <T>(url: string, body: unknown): Promise<T> => {
    const res = await fetch(`${running.baseUrl}${url}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    if (!res.ok) throw new Error(`${url}: ${res.status} ${await res.text()}`);
    return (await res.json()) as T;
  };
  await post(AGENT_PATHS.register, registrationBody(agentId));
  return {
    /** Leases the next run of the location, waiting for one to be queued, and answers it with `result`. */
    async answer(checkId: string, result: Partial<RunResult> = {}): Promise<void> {
      let job: Job | undefined;
      while (!job)
        ({
          jobs: [job],
        } = await post<{ jobs: Job[] }>(AGENT_PATHS.lease, {
          agentId,
          slots: { uptime: 1, heavy: 0 },
          waitSeconds: 10,
        }));
      expect(job.check.id).toBe(checkId);
      await post(AGENT_PATHS.results, { agentId, leaseId: job.leaseId, result: resultFor(job, agentId, result) });
    },
  };
}

/**
 * A daily API check at a new location `slugName`, with the location's agent, which has answered the
 * run a new check gets at once (the scheduler's): only the runs the test's CLI commands start come next.
 */
async function answeredCheckAt(slugName: string, name: string, url: string) {
  const agent = await locationAgent(slugName);
  const check = await call<{ id: string }>('POST', '/v1/checks/api', {
    name,
    frequency: 1440,
    request: { method: 'GET', url },
    privateLocations: [slugName],
  });
  await agent.answer(check.id);
  return { agent, check };
}

/** A generous bound: on a loaded machine each CLI process is slow to start. */
const SLOW = 300_000;

beforeAll(async () => {
  // First run only: the install is cached (test/support/reference-cli.ts).
  const [bin, service] = await Promise.all([installReferenceCli(), startRunningService()]);
  running = service;
  const { accountId, apiKey } = await createAccount(running.service.store, 'Acme');
  headers = { authorization: `Bearer ${apiKey}`, 'x-service-account': accountId, 'content-type': 'application/json' };
  target = {
    bin,
    apiUrl: running.baseUrl,
    apiKey,
    accountId,
    home: mkdtempSync(path.join(tmpdir(), 'outpost-cli-home-')),
  };

  await call('POST', '/v1/private-locations', { name: 'Office', slugName: 'office' });
  checkId = (
    await call<{ id: string }>('POST', '/v1/checks/api', {
      name: 'Home page',
      request: { method: 'GET', url: 'https://example.test/' },
      privateLocations: ['office'],
      tags: ['web'],
    })
  ).id;
  const service1 = await call<{ id: string }>('POST', '/v1/status-pages/services', { name: 'Website' });
  pageId = (
    await call<{ id: string }>('POST', '/v1/status-pages', {
      name: 'Acme status',
      url: 'acme',
      cards: [{ name: 'Core', services: [{ id: service1.id }] }],
    })
  ).id;
  channelId = (
    await call<{ id: number }>('POST', '/v1/alert-channels', { type: 'EMAIL', config: { address: 'ops@example.test' } })
  ).id;
}, 300_000);

afterAll(async () => {
  await running?.stop();
  if (target) rmSync(target.home, { recursive: true, force: true });
});

describe('the reference CLI against the service', () => {
  it(
    'reads checks, their stats, runtimes, status pages and alert channels',
    async () => {
      const [list, filtered, get, stats, runtimes, pages, page, channels, channel, logs] = await inPairs([
        ['checks', 'list', '--output', 'json'],
        ['checks', 'list', '--tag', 'api', '--search', 'home'],
        ['checks', 'get', checkId],
        ['checks', 'stats'],
        ['runtimes'],
        ['status-pages', 'list'],
        ['status-pages', 'get', pageId],
        ['alert-channels', 'list'],
        ['alert-channels', 'get', String(channelId)],
        ['alert-channels', 'logs', String(channelId)],
      ]);
      expect(JSON.stringify(JSON.parse(list ?? ''))).toContain(checkId);
      // Filtered by the service: the check is tagged web, not api.
      expect(filtered).toContain('No checks matching');
      expect(get).toContain('https://example.test/');
      expect(stats).toContain('Home page');
      expect((JSON.parse(runtimes ?? '') as Array<{ name: string }>).map((r) => r.name)).toEqual([
        '2026.04',
        '2025.04',
      ]);
      expect(pages).toContain('Acme status');
      expect(page).toContain('Website');
      expect(channels).toContain('ops@example.test');
      expect(channel).toContain(`ID:              ${channelId}`);
      expect(logs).toContain('No alert channel logs found');
    },
    SLOW,
  );

  it(
    'creates, updates, lists and resolves a status page incident',
    async () => {
      const created = await ok(
        'incidents',
        'create',
        '--status-page-id',
        pageId,
        '--title',
        'Outage',
        '--severity',
        'major',
        '--message',
        'Investigating',
        '--force',
        '--output',
        'json',
      );
      const incidentId = (JSON.parse(created) as { id: string }).id;
      expect(incidentId).toMatch(/^[0-9a-f-]{36}$/);
      expect(
        await ok('incidents', 'update', incidentId, '--message', 'Fixing', '--status', 'identified', '--force'),
      ).toContain('identified');
      expect(await ok('incidents', 'list', '--status-page-id', pageId)).toContain(incidentId);
      expect(await ok('incidents', 'resolve', incidentId, '--message', 'Done', '--force')).toContain('resolved');
      const incident = await call<{ incidentUpdates: Array<{ status: string; description: string }> }>(
        'GET',
        `/v1/status-pages/incidents/${incidentId}`,
      );
      expect(incident.incidentUpdates.map((u) => u.status)).toEqual(
        expect.arrayContaining(['INVESTIGATING', 'IDENTIFIED', 'RESOLVED']),
      );
    },
    SLOW,
  );

  it(
    'adds, updates, lists, pulls and removes environment variables',
    async () => {
      expect(await ok('env', 'add', 'REGION', 'eu')).toContain('added');
      expect(await ok('env', 'update', 'REGION', 'us', '--secret')).toContain('updated');
      // A secret's value is never read back, by the CLI as by any client.
      expect(await ok('env', 'ls')).toContain('REGION=');
      await ok('env', 'pull', 'pulled.env', '--force');
      expect(readFileSync(path.join(target.home, 'pulled.env'), 'utf8')).toContain('REGION=');
      expect(await ok('env', 'rm', 'REGION', '--force')).toContain('deleted');
      expect(await call<unknown[]>('GET', '/v1/variables')).toEqual([]);
    },
    SLOW,
  );

  it(
    'runs a check now and waits for the verdict its location’s agent reports',
    async () => {
      const { agent, check: login } = await answeredCheckAt('lab', 'Login', 'https://example.test/login');

      const passing = runCli(target, ['checks', 'run', '--check-id', login.id]);
      await agent.answer(login.id);
      const passed = await passing;
      expect(passed.exitCode, `${passed.stdout}\n${passed.stderr}`).toBe(0);
      expect(passed.stdout).toContain('1 check session completed: 1 passed.');
      expect(passed.stdout).toMatch(/passed\s+Login\s+API\s+lab\s/);

      const failing = runCli(target, ['checks', 'run', '--check-id', login.id, '--output', 'json']);
      await agent.answer(login.id, { hasFailures: true });
      const failed = await failing;
      expect(failed.exitCode).toBe(1);
      const [session] = (
        JSON.parse(failed.stdout) as {
          sessions: Array<{ checkId: string; status: string; results: Array<{ hasFailures: boolean }> }>;
        }
      ).sessions;
      expect(session).toMatchObject({ checkId: login.id, status: 'FAILED', results: [{ hasFailures: true }] });
    },
    SLOW,
  );

  it(
    'gives up at its --timeout on the service’s 408s, and says when no check matches',
    async () => {
      const { agent, check: report } = await answeredCheckAt('annex', 'Report', 'https://example.test/report');
      // No agent answers within the second: the completion request ends in 408 and the CLI stops waiting.
      const [waited, none] = await Promise.all([
        runCli(target, ['checks', 'run', '--check-id', report.id, '--timeout', '1']),
        runCli(target, ['checks', 'run', '--tags', 'no-such-tag']),
      ]);
      expect(waited.exitCode).toBe(1);
      expect(`${waited.stdout}${waited.stderr}`).toContain('Timed out waiting for check sessions.');
      expect(none.exitCode).toBe(1);
      expect(none.stdout).toContain('No matching checks were found.');
      // The session still runs in the service: its run is there for the agent.
      await agent.answer(report.id);
    },
    SLOW,
  );

  it(
    'deletes a check',
    async () => {
      const doomed = await call<{ id: string }>('POST', '/v1/checks/api', {
        name: 'Doomed',
        request: { method: 'GET', url: 'https://example.test/' },
      });
      expect(await ok('checks', 'delete', doomed.id, '--force')).toContain('deleted');
      const gone = await runCli(target, ['checks', 'get', doomed.id]);
      expect(gone.exitCode).not.toBe(0);
      expect(`${gone.stdout}${gone.stderr}`).toContain('Check not found');
    },
    SLOW,
  );

  it(
    'is refused with the reference’s own message when the key is wrong',
    async () => {
      const run = await runCli({ ...target, apiKey: 'op_not-a-key' }, ['checks', 'list']);
      expect(run.exitCode).not.toBe(0);
      expect(`${run.stdout}${run.stderr}`).toContain('Authentication failed');
    },
    SLOW,
  );
});
