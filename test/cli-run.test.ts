/**
 * `outpost run` as an operator meets it: a real `bin/outpost` process against the service started
 * in-process on loopback, with a stub agent speaking the agent protocol over HTTP that passes every
 * check but the one named "Broken". Exit codes: 0 all passed, 1 a failure, 2 a configuration error.
 */
import { execFile } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAccount } from '../src/service/accounts.ts';
import type { StoredCheck } from '../src/service/store/store.ts';
import { AGENT_PATHS, type Job } from '../src/shared/protocol.ts';
import { registrationBody, resultFor } from './helpers/dispatch-harness.ts';
import { type RunningService, startRunningService } from './helpers/running-service.ts';
import { addCheck, addOffice } from './support/fresh-account.ts';

const BIN = path.resolve(import.meta.dirname, '../bin/outpost');

let svc: RunningService;
let env: Record<string, string>;
let homepage: StoredCheck;
let broken: StoredCheck;
let stopAgent: () => Promise<void>;

async function outpost(args: string[], extra: Record<string, string> = env) {
  try {
    const { stdout, stderr } = await promisify(execFile)(BIN, args, {
      env: { PATH: process.env.PATH ?? '', ...extra },
    });
    return { code: 0, stdout, stderr };
  } catch (err) {
    const e = err as { code: number; stdout: string; stderr: string };
    return { code: e.code, stdout: e.stdout, stderr: e.stderr };
  }
}

/** Leases in a long-poll loop and reports each job: failed for the check named "Broken". */
async function startStubAgent(key: string): Promise<() => Promise<void>> {
  const agentId = crypto.randomUUID();
  const post = async (p: string, body: unknown) => {
    const res = await fetch(`${svc.baseUrl}${p}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    if (res.status !== 200) throw new Error(`${p}: ${res.status} ${await res.text()}`);
    return (await res.json()) as { jobs?: Job[] };
  };
  await post(AGENT_PATHS.register, registrationBody(agentId));
  let running = true;
  const loop = (async () => {
    while (running) {
      const { jobs = [] } = await post(AGENT_PATHS.lease, { agentId, slots: { uptime: 10, heavy: 0 }, waitSeconds: 1 });
      for (const job of jobs) {
        const failed = job.check.name === 'Broken';
        await post(AGENT_PATHS.results, {
          agentId,
          leaseId: job.leaseId,
          result: resultFor(job, agentId, failed ? { hasFailures: true, error: 'status 500' } : {}),
        });
      }
    }
  })();
  return async () => {
    running = false;
    await loop;
  };
}

beforeAll(async () => {
  svc = await startRunningService();
  const store = svc.service.store;
  const { accountId, apiKey } = await createAccount(store, 'CLI');
  const location = await addOffice(store, accountId);
  const { rawKey } = await store.locations.createKey(accountId, location.id);
  // Created in the store, so the scheduler makes no run of its own: every run is one `outpost run` asked for.
  const request = { method: 'GET', url: 'http://127.0.0.1:9/' };
  const create = (name: string) => addCheck(store, accountId, location.id, name, { request }, { frequency: 10 });
  homepage = await create('Homepage');
  broken = await create('Broken');
  env = { OUTPOST_URL: svc.baseUrl, OUTPOST_API_KEY: apiKey, OUTPOST_ACCOUNT_ID: accountId };
  stopAgent = await startStubAgent(rawKey);
});
afterAll(async () => {
  await stopAgent();
  await svc.stop();
});

describe('outpost run', () => {
  it('--wait prints one line per run and exits 0 when all passed', async () => {
    const { code, stdout } = await outpost(['run', homepage.id, '--wait']);
    expect(code).toBe(0);
    expect(stdout.trim().split('\n')).toEqual(['Homepage\toffice\tpassed\t12 ms']);
  });

  it('--wait exits 1 when a run failed, after printing every verdict', async () => {
    const { code, stdout } = await outpost(['run', homepage.id, broken.id, '--wait']);
    expect(code).toBe(1);
    expect(stdout.trim().split('\n').sort()).toEqual([
      'Broken\toffice\tfailed\t12 ms',
      'Homepage\toffice\tpassed\t12 ms',
    ]);
  });

  it('without --wait prints the session id and exits 0', async () => {
    const { code, stdout } = await outpost(['run', homepage.id]);
    expect(code).toBe(0);
    const id = stdout.trim();
    expect(id).toMatch(/^[0-9a-f-]{36}$/);
    const res = await fetch(`${svc.baseUrl}/v2/check-sessions/${id}`, {
      headers: { authorization: `Bearer ${env.OUTPOST_API_KEY}`, 'x-service-account': env.OUTPOST_ACCOUNT_ID ?? '' },
    });
    expect(res.status).toBe(200);
  });

  it('exits 1 saying so when no check matches', async () => {
    const { code, stderr } = await outpost(['run', crypto.randomUUID(), '--wait']);
    expect(code).toBe(1);
    expect(stderr).toMatch(/404 No matching checks were found/);
  });

  const bad: Array<[string, string[], () => Record<string, string>, RegExp]> = [
    ['no check id', ['run'], () => env, /CHECK_ID is missing/],
    ['a check id that is no uuid', ['run', 'homepage'], () => env, /CHECK_ID "homepage" is not a check id/],
    [
      'no OUTPOST_API_KEY',
      ['run', crypto.randomUUID()],
      () => ({ ...env, OUTPOST_API_KEY: '' }),
      /OUTPOST_API_KEY is required/,
    ],
    [
      'no OUTPOST_ACCOUNT_ID',
      ['run', crypto.randomUUID()],
      () => ({ ...env, OUTPOST_ACCOUNT_ID: '' }),
      /OUTPOST_ACCOUNT_ID is required/,
    ],
    [
      'a key the service refuses',
      ['run', crypto.randomUUID()],
      () => ({ ...env, OUTPOST_API_KEY: 'op_wrong' }),
      /refused OUTPOST_API_KEY/,
    ],
    [
      'a bad OUTPOST_URL',
      ['run', crypto.randomUUID()],
      () => ({ ...env, OUTPOST_URL: 'service:8080' }),
      /OUTPOST_URL=/,
    ],
  ];
  it.each(bad)('exits 2 with one line naming the setting for %s', async (_what, args, envOf, pattern) => {
    const { code, stderr } = await outpost(args, envOf());
    expect(code).toBe(2);
    expect(stderr.trim().split('\n')).toHaveLength(1);
    expect(stderr).toMatch(pattern);
  });
});
