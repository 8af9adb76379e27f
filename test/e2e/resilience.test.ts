/**
 * Nothing lost: the agent's shutdown sequence, an agent killed in the middle of a job, and the service
 * going away for a while. Real service and agent processes; a target on loopback that holds requests
 * until the test lets them go, so every step is ordered by events rather than timing.
 */
import { EventEmitter, once } from 'node:events';
import type { ServerResponse } from 'node:http';
import { DatabaseSync } from 'node:sqlite';
import { request } from 'undici';
import { afterEach, describe, expect, it } from 'vitest';
import { Api, createAccount, type Proc, startAgent, startService, startTarget, tempDir, until } from './harness.ts';

/** A target whose every request waits until release(); 'request' fires as each one arrives. */
async function holdingTarget() {
  const held: ServerResponse[] = [];
  const events = new EventEmitter();
  const target = await startTarget((_req, res) => {
    held.push(res);
    events.emit('request', held.length);
  });
  return {
    url: target.url,
    get requests() {
      return target.requests;
    },
    /** Resolves once the target has seen `n` requests in all. */
    async seen(n: number) {
      while (target.requests < n) await once(events, 'request');
    },
    release() {
      for (const res of held.splice(0)) res.writeHead(200, { 'content-type': 'application/json' }).end('{"ok":true}');
    },
    close: () => target.close(),
  };
}

async function healthPort(agent: Proc): Promise<number> {
  const line = await agent.waitForLog((l) => l.msg === 'probes listening');
  return Number(line.port);
}

async function probe(port: number, path: string): Promise<{ status: number; body: Record<string, unknown> }> {
  const res = await request(`http://127.0.0.1:${port}${path}`);
  return { status: res.statusCode, body: (await res.body.json()) as Record<string, unknown> };
}

/** A daily check: it runs once right after creation and not again while a test lasts. */
function onceCheck(name: string, url: string, location: string) {
  return { name, frequency: 1440, privateLocations: [location], request: { method: 'GET', url } };
}

const cleanups: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  for (const fn of cleanups.splice(0).reverse()) await fn();
});

/** A fresh data directory and a holding target, both gone after the test (held requests released first). */
async function dataAndTarget(prefix: string) {
  const data = await tempDir(prefix);
  cleanups.push(() => data.remove());
  const target = await holdingTarget();
  cleanups.push(async () => {
    target.release();
    await target.close();
  });
  return { data, target };
}

async function setup(serviceEnv: Record<string, string> = {}) {
  const { data, target } = await dataAndTarget('e2e-resilience');
  const service = await startService({ DATA_DIR: data.dir, ...serviceEnv });
  cleanups.push(() => service.proc.stop());
  const api = new Api(service.url, await createAccount(data.dir));
  const location = await api.createLocation('edge');
  const agent = (env: Record<string, string> = {}) => {
    const proc = startAgent({ API_KEY: location.key, API_URL: service.url, ...env });
    cleanups.push(() => proc.stop('SIGKILL'));
    return proc;
  };
  return { data, target, service, api, location, agent };
}

describe('agent shutdown', () => {
  it('turns readiness 503 at once, lets the running job finish, delivers its result and exits 0', async () => {
    const { data, target, api, agent } = await setup();
    const proc = agent({ SHUTDOWN_GRACE_SECONDS: '20', SPOOL_DIR: `${data.dir}/spool-a` });
    const port = await healthPort(proc);
    await proc.waitForLog((l) => l.msg === 'registered; taking work');
    expect((await probe(port, '/-/readiness')).status).toBe(200);

    const check = await api.createApiCheck(onceCheck('slow job', `${target.url}/slow`, 'edge'));
    await target.seen(1);
    expect((await probe(port, '/health')).body.jobsRunning).toBe(1);

    proc.child.kill('SIGTERM');
    await proc.waitForLog((l) => l.msg === 'stopping');
    expect((await probe(port, '/-/readiness')).status).toBe(503);
    // Still alive and draining: liveness holds while the job finishes.
    expect((await probe(port, '/-/liveness')).status).toBe(200);

    target.release();
    expect(await proc.exited).toBe(0);
    const results = await api.results(check.id);
    expect(results).toHaveLength(1);
    expect(results[0]).toMatchObject({ hasFailures: false, isCancelled: false });
  });

  it('hands a job that outlives the grace period back to the service, which leases it to the next agent', async () => {
    const { data, target, api, agent } = await setup();
    const first = agent({ SHUTDOWN_GRACE_SECONDS: '1', SPOOL_DIR: `${data.dir}/spool-a` });
    await first.waitForLog((l) => l.msg === 'registered; taking work');
    const check = await api.createApiCheck(onceCheck('outlives grace', `${target.url}/slow`, 'edge'));
    await target.seen(1);

    first.child.kill('SIGTERM');
    const released = await first.waitForLog((l) => l.msg === 'grace period over; releasing unfinished runs');
    expect(released.runs).toHaveLength(1);
    expect(await first.exited).toBe(0);
    const runId = (released.runs as string[])[0]!;
    const run = await api.ok<{ state: string; leaseAttempt: number }>('GET', `/v1/check-runs/${runId}`);
    expect(run).toMatchObject({ state: 'queued', leaseAttempt: 2 });

    const second = agent({ SPOOL_DIR: `${data.dir}/spool-b` });
    await target.seen(2);
    target.release();
    const [result] = await until(
      async () => {
        const r = await api.results(check.id);
        return r.length > 0 ? r : undefined;
      },
      { what: 'the handed-back run to finish on the second agent' },
    );
    expect(result).toMatchObject({ hasFailures: false, attempts: 2 });
    await second.stop();
  });
});

describe('an agent killed mid-job', () => {
  it('has its job leased again after the lease expires, run once more on another agent, with one result', async () => {
    const { data, target, api, agent } = await setup({ JOB_LEASE_SECONDS: '2' });
    const doomed = agent({ SPOOL_DIR: `${data.dir}/spool-a` });
    await doomed.waitForLog((l) => l.msg === 'registered; taking work');
    const check = await api.createApiCheck(onceCheck('killed mid-job', `${target.url}/slow`, 'edge'));
    await target.seen(1);
    doomed.child.kill('SIGKILL');
    await doomed.exited;

    const survivor = agent({ SPOOL_DIR: `${data.dir}/spool-b` });
    await target.seen(2);
    target.release();
    const results = await until(
      async () => {
        const r = await api.results(check.id);
        return r.length > 0 ? r : undefined;
      },
      { what: 'the re-leased run to finish' },
    );
    expect(results).toHaveLength(1);
    expect(results[0]).toMatchObject({ hasFailures: false, attempts: 2 });
    // Once more, not more: the dead agent's attempt and the survivor's, nothing else.
    expect(target.requests).toBe(2);
    await survivor.stop();
  });
});

describe('the service away for a while', () => {
  it('spools results on the agent and delivers every one, once, when the service is back', async () => {
    const { data, target } = await dataAndTarget('e2e-outage');
    let service = await startService({ DATA_DIR: data.dir });
    cleanups.push(() => service.proc.stop());
    const port = new URL(service.url).port;
    const api = new Api(service.url, await createAccount(data.dir));
    const location = await api.createLocation('edge');
    const agent = startAgent({ API_KEY: location.key, API_URL: service.url, SPOOL_DIR: `${data.dir}/spool` });
    cleanups.push(() => agent.stop('SIGKILL'));
    const health = await healthPort(agent);
    await agent.waitForLog((l) => l.msg === 'registered; taking work');

    const checks = [];
    for (const name of ['outage a', 'outage b', 'outage c'])
      checks.push(await api.createApiCheck(onceCheck(name, `${target.url}/${name}`, 'edge')));
    await target.seen(3);

    expect(await service.proc.stop()).toBe(0);
    target.release();
    // All three results are on disk while the service is away.
    await until(async () => ((await probe(health, '/health')).body.spooled === 3 ? true : undefined), {
      what: 'three spooled results',
    });

    service = await startService({ DATA_DIR: data.dir, PORT: port });
    const backAt = Date.now();
    cleanups.push(() => service.proc.stop());
    for (const check of checks) {
      await until(async () => ((await api.results(check.id)).length > 0 ? true : undefined), {
        what: `the result of ${check.id}`,
      });
    }
    await until(async () => ((await probe(health, '/health')).body.spooled === 0 ? true : undefined), {
      what: 'an empty spool',
    });
    // Back within the short cap for an unreachable service (5 s), plus room for a loaded machine.
    expect(Date.now() - backAt).toBeLessThan(5_000 + 3_000);
    const retries = agent.lines.filter(
      (l) => l.msg === 'lease request failed; retrying' || l.msg === 'result upload failed; will retry',
    );
    expect(retries.some((l) => l.unreachable === true)).toBe(true);
    for (const r of retries.filter((l) => l.unreachable)) expect(r.retryInMs).toBeLessThanOrEqual(5_000);
    for (const check of checks) expect(await api.results(check.id)).toHaveLength(1);

    const db = new DatabaseSync(`${data.dir}/outpost.db`, { readOnly: true });
    const perRun = db.prepare('SELECT run_id, count(*) AS n FROM results GROUP BY run_id').all() as Array<{
      n: number;
    }>;
    db.close();
    expect(perRun).toHaveLength(3);
    expect(perRun.every((r) => r.n === 1)).toBe(true);
    expect(target.requests).toBe(3);
  });
});
