import { once } from 'node:events';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { CheckOutcome, CheckRunner } from '../../src/agent/checks/runner.ts';
import { type AgentDaemon, type AgentDaemonOptions, startDelayOf } from '../../src/agent/daemon.ts';
import { LIVE_UPLOADS } from '../../src/agent/deliverer.ts';
import { type HealthServer, startHealthServer } from '../../src/agent/health.ts';
import { ResultSpool } from '../../src/agent/spool.ts';
import type { CheckType } from '../../src/shared/checks/types.ts';
import { EXIT } from '../../src/shared/errors.ts';
import { AGENT_PATHS, type Job } from '../../src/shared/protocol.ts';
import { passingRunResult } from '../support/results-run-result.ts';
import { recordingLogger, tempDir } from './helpers.ts';
import { makeJob, type ProtocolStub } from './protocol-stub.ts';
import { type Cleanups, type StubDaemonOptions, startStubDaemon } from './stub-daemon.ts';

const KEY = 'pl_daemon_test_key';

/**
 * A runner driven by the test: each run waits until the test calls finish(runId) or its signal
 * aborts (then it reports what it saw, as a real runner would).
 */
class ControlledRunner implements CheckRunner {
  readonly checkType: CheckType = 'API';
  readonly #gates = new Map<string, () => void>();
  readonly autoFinish: boolean;
  readonly aborted: string[] = [];
  constructor(autoFinish = true) {
    this.autoFinish = autoFinish;
  }
  finish(runId: string): void {
    this.#gates.get(runId)?.();
  }
  async run(check: { id: string }, ctx: Parameters<CheckRunner['run']>[1]): Promise<CheckOutcome> {
    const started = new Date();
    if (!this.autoFinish) {
      await new Promise<void>((resolve) => {
        this.#gates.set(check.id.replace(/^check-/, ''), resolve);
        ctx.signal.addEventListener('abort', () => resolve(), { once: true });
      });
    }
    if (ctx.signal.aborted) this.aborted.push(check.id);
    const stopped = new Date();
    return {
      startedAt: started.toISOString(),
      stoppedAt: stopped.toISOString(),
      responseTime: stopped.getTime() - started.getTime(),
      hasFailures: ctx.signal.aborted,
      hasErrors: false,
      isDegraded: false,
      overMaxResponseTime: false,
      error: null,
      apiCheckResult: null,
    };
  }
}

/** One controlled runner for an uptime type (API) and a heavy one (BROWSER). */
function bothClasses(runner: CheckRunner): ReadonlyMap<CheckType, CheckRunner> {
  return new Map<CheckType, CheckRunner>([
    ['API', runner],
    ['BROWSER', runner],
  ]);
}

const cleanups: Cleanups = [];
afterEach(async () => {
  while (cleanups.length) await cleanups.pop()?.();
});

/** A daemon (not started) against the stub, running API checks with `runner` (a ControlledRunner by default). */
async function setup(opts: { runner?: CheckRunner } & Omit<Partial<StubDaemonOptions>, 'apiKey'> = {}) {
  const { runner = new ControlledRunner(), ...rest } = opts;
  const started = await startStubDaemon(cleanups, { apiKey: KEY, runners: new Map([['API', runner]]), ...rest });
  return { ...started, runner };
}

/** Collects 'result-delivered' runIds and resolves once `n` have arrived. */
function delivered(daemon: AgentDaemon, n: number): Promise<string[]> {
  const ids: string[] = [];
  return new Promise((resolve) => {
    daemon.on('result-delivered', (e) => {
      ids.push(e.runId);
      if (ids.length === n) resolve(ids);
    });
  });
}

/** Adds `job` to the service's queue and waits until the daemon has started running it. */
async function startJob(stub: ProtocolStub, daemon: AgentDaemon, job = makeJob()) {
  const started = once(daemon, 'job-started');
  stub.addJob(job);
  await started;
  return job;
}

/** The fields of a job handed out `ms` ahead of its due time. */
function dueIn(ms: number): Pick<Job, 'dueAt' | 'startInMs'> {
  return { dueAt: new Date(Date.now() + ms).toISOString(), startInMs: ms };
}

/**
 * Hands `job` to the daemon and waits until it has it and has asked for more once since: the state
 * while the job waits for its due time. `started` resolves when the job starts.
 */
async function leaseAhead(stub: ProtocolStub, daemon: AgentDaemon, job: Job) {
  const leased = once(daemon, 'leased');
  const started = once(daemon, 'job-started');
  const requestsBefore = stub.leaseRequests.length;
  stub.addJob(job);
  await leased;
  const receivedAt = performance.now();
  await expect.poll(() => stub.leaseRequests.length).toBeGreaterThan(requestsBefore + 1);
  return { receivedAt, started };
}

/** A started daemon whose runner holds its one job: the run goes on until runner.finish(job.runId) or an abort. */
async function heldRun(opts: Partial<AgentDaemonOptions> = {}) {
  const runner = new ControlledRunner(false);
  const started = await setup({ runner, ...opts });
  await started.daemon.start();
  const job = await startJob(started.stub, started.daemon);
  return { ...started, runner, job };
}

/** A started daemon whose one held runner serves both slot classes (API: uptime, BROWSER: heavy). */
async function startedWithBothClasses(opts: Omit<Partial<StubDaemonOptions>, 'apiKey' | 'runners'> = {}) {
  const runner = new ControlledRunner(false);
  const started = await setup({ runner, runners: bothClasses(runner), ...opts });
  await started.daemon.start();
  return { ...started, runner };
}

describe('AgentDaemon', () => {
  it('registers, leases a job, runs it and delivers its result', async () => {
    const { stub, daemon } = await setup();
    const registered = once(daemon, 'registered');
    await daemon.start();
    await registered;
    expect(daemon.isReady()).toBe(true);
    expect(stub.registered).toBe(1);

    const job = makeJob();
    const got = delivered(daemon, 1);
    stub.addJob(job);
    expect(await got).toEqual([job.runId]);

    const [result] = stub.stored;
    expect(result?.runId).toBe(job.runId);
    expect(result?.checkId).toBe(job.check.id);
    expect(result?.checkType).toBe('API');
    expect(result?.isCancelled).toBe(false);
    expect(result?.hasFailures).toBe(false);
    expect(result?.agent).toEqual({ id: daemon.agentId, version: daemon.version });
    expect(result?.scheduleLagMs).toBeGreaterThanOrEqual(5);
    expect(daemon.lastSuccessfulPollAt).toBeInstanceOf(Date);
    // The lease advertised the free slots per class.
    expect(stub.leaseRequests[0]?.slots).toEqual({ uptime: 5, heavy: 1 });
    expect(stub.leaseRequests[0]?.agentId).toBe(daemon.agentId);
  });

  it('reports a type it has no runner for as a failed run naming what it runs', async () => {
    const { stub, daemon } = await setup();
    await daemon.start();
    const got = delivered(daemon, 1);
    stub.addJob(makeJob({ checkType: 'BROWSER' }));
    await got;
    const [result] = stub.stored;
    expect(result?.hasErrors).toBe(true);
    expect(result?.hasFailures).toBe(true);
    expect(result?.error).toMatch(/no runner for BROWSER.*runs API/);
  });

  it('asks for free slots only, and waits for a slot (not polling) when all are busy', async () => {
    const { stub, daemon, runner } = await startedWithBothClasses({ uptimeConcurrency: 1, jobConcurrency: 1 });
    const a = await startJob(stub, daemon);
    const b = await startJob(stub, daemon, makeJob({ checkType: 'BROWSER' }));
    const before = stub.leaseRequests.length;
    expect(daemon.jobsRunning).toBe(2);
    // Both classes full: the loop must sit on the slot event, not lease.
    expect(stub.leaseRequests.at(-1)?.slots).toEqual({ uptime: 0, heavy: 1 });
    const freed = once(daemon, 'slot-freed');
    const oneDelivered = delivered(daemon, 1);
    runner.finish(a.runId);
    await freed;
    await oneDelivered;
    expect(stub.leaseRequests.length).toBeLessThanOrEqual(before + 1);
    runner.finish(b.runId);
  });

  it('starts a job handed out ahead of its due time after startInMs, holding no slot while it waits', async () => {
    const { stub, daemon } = await setup({ uptimeConcurrency: 1 });
    await daemon.start();
    const { receivedAt, started } = await leaseAhead(stub, daemon, makeJob(dueIn(300)));
    // It waits, and meanwhile the agent asks for its one slot again: the waiting job does not hold it.
    expect(stub.leaseRequests.at(-1)?.slots.uptime).toBe(1);
    expect(daemon.jobsQueued).toBe(1);
    expect(daemon.poolState('uptime')).toMatchObject({ queued: 1, running: 0, free: 1 });
    await started;
    expect(performance.now() - receivedAt).toBeGreaterThanOrEqual(290);
  });

  it('asks for runs in hand beyond its uptime slots once runs are short, and starts them as slots free', async () => {
    const { stub, daemon, runner } = await startedWithBothClasses({ uptimeConcurrency: 4, jobConcurrency: 1 });
    // No run has finished yet: the lease asks for the free slots only.
    await stub.until(() => stub.leaseRequests.length > 0);
    expect(stub.leaseRequests[0]?.slots).toEqual({ uptime: 4, heavy: 1 });
    const first = await startJob(stub, daemon);
    const done = delivered(daemon, 1);
    runner.finish(first.runId);
    await done;
    // A run of a few milliseconds: half the slots again (2) may wait in hand.
    await stub.until(() => stub.leaseRequests.at(-1)?.slots.uptime === 6);

    const jobs = Array.from({ length: 6 }, () => makeJob());
    const started = new Set<string>();
    daemon.on('job-started', (job: Job) => started.add(job.runId));
    for (const job of jobs) stub.addJob(job);
    await stub.until(() => started.size === 4);
    expect(daemon.poolState('uptime')).toMatchObject({ running: 4, queued: 2, free: 0 });
    await stub.until(() => stub.leaseRequests.at(-1)?.slots.uptime === 0);

    const firstStarted = jobs.find((j) => started.has(j.runId));
    runner.finish(firstStarted!.runId);
    await stub.until(() => started.size === 5);
    expect(daemon.poolState('uptime')).toMatchObject({ running: 4, queued: 1 });
    // The four running finish; the last run in hand starts in a freed slot.
    const running = [...started].filter((id) => id !== firstStarted!.runId);
    for (const id of running) runner.finish(id);
    await stub.until(() => started.size === 6);
    const last = jobs.find((j) => j.runId !== firstStarted!.runId && !running.includes(j.runId));
    runner.finish(last!.runId);
  });

  it('keeps the slot of a heavy job that waits for its due time', async () => {
    const { stub, daemon, runner } = await startedWithBothClasses({ jobConcurrency: 1 });
    const job = makeJob({ checkType: 'BROWSER', ...dueIn(300) });
    const { started } = await leaseAhead(stub, daemon, job);
    expect(stub.leaseRequests.at(-1)?.slots.heavy).toBe(0);
    expect(daemon.poolState('heavy')).toMatchObject({ queued: 1, running: 0, free: 0 });
    await started;
    runner.finish(job.runId);
  });

  it('takes startInMs as a bounded wait to the next 20 ms mark: none when absent or bad, at most a second', () => {
    const now = 1_000_000;
    expect(startDelayOf({}, now)).toBe(0);
    expect(startDelayOf({ startInMs: -5 }, now)).toBe(0);
    expect(startDelayOf({ startInMs: Number.NaN }, now)).toBe(0);
    expect(startDelayOf({ startInMs: 80 }, now)).toBe(80);
    expect(startDelayOf({ startInMs: 80.4 }, now)).toBe(100);
    expect(startDelayOf({ startInMs: 61 }, now + 3)).toBe(77);
    expect(startDelayOf({ startInMs: 3_600_000 }, now)).toBe(1_000);
  });

  it('stops leasing while more results wait for their upload than it has slots, and goes on once they are stored', async () => {
    const { stub, daemon } = await setup({ runner: new ControlledRunner(true) });
    let storeResults = () => {};
    stub.holdResults = new Promise<void>((resolve) => {
      storeResults = resolve;
    });
    for (let i = 0; i < 40; i++) stub.addJob(makeJob({ runId: `r${i}` }));
    const waiting = once(daemon, 'waiting-for-results');
    await daemon.start();
    const [{ pending }] = await waiting;
    // 5 + 1 slots: at least six results wait in memory, LIVE_UPLOADS more are in upload, and what the
    // agent did not lease stays queued at the service.
    expect(pending).toBeGreaterThanOrEqual(6);
    expect(40 - stub.queue.length).toBeLessThanOrEqual(pending + LIVE_UPLOADS + 5);
    expect(stub.queue.length).toBeGreaterThan(0);
    stub.holdResults = undefined;
    storeResults();
    await stub.until(() => stub.stored.length === 40);
    expect(stub.queue).toEqual([]);
  });

  it('re-asks at once when a slot frees while the long-poll in flight asked none of that class', async () => {
    const { stub, daemon, runner } = await startedWithBothClasses({ jobConcurrency: 1, stub: { maxWaitSeconds: 60 } });
    const h1 = makeJob({ checkType: 'BROWSER' });
    const h2 = makeJob({ checkType: 'BROWSER' });
    await startJob(stub, daemon, h1);
    // Queue h2 on the service; the poll in flight asks heavy: 0, so it is not handed out yet.
    await stub.until(() => stub.leaseRequests.at(-1)?.slots.heavy === 0);
    stub.addJob(h2);
    expect(stub.queue).toHaveLength(1);
    const started2 = once(daemon, 'job-started');
    runner.finish(h1.runId);
    const [job] = await started2; // well before the 60 s long-poll would have ended
    expect(job.runId).toBe(h2.runId);
    runner.finish(h2.runId);
  });

  it('aborts a run the service cancels and reports it cancelled', async () => {
    const { stub, daemon, job } = await heldRun();
    const got = delivered(daemon, 1);
    stub.leaseStates.set(job.runId, 'cancelled');
    await got;
    expect(stub.heartbeats.some((h) => h.leases.some((l) => l.runId === job.runId))).toBe(true);
    expect(stub.stored[0]?.isCancelled).toBe(true);
    expect(stub.stored[0]?.error).toBe('cancelled by the service');
  });

  it('stops a run whose lease was lost without submitting a result', async () => {
    const { stub, daemon, runner, job } = await heldRun();
    const finished = once(daemon, 'job-finished');
    stub.leaseStates.set(job.runId, 'lost');
    const [, result] = await finished;
    expect(result).toBeUndefined();
    expect(runner.aborted).toEqual([job.check.id]);
    expect(stub.stored).toEqual([]);
  });

  it('logs a passing run at DEBUG only, and a failing run at INFO', async () => {
    const info = recordingLogger(undefined, 'INFO');
    const { stub, daemon } = await setup({ log: info.log });
    await daemon.start();
    const passing = makeJob();
    const failing = makeJob({ checkType: 'BROWSER' });
    const got = delivered(daemon, 2);
    stub.addJob(passing);
    stub.addJob(failing);
    await got;
    const perRun = info.lines.filter((l) => typeof l.runId === 'string');
    expect(perRun.filter((l) => l.runId === passing.runId)).toEqual([]);
    expect(perRun.filter((l) => l.runId === failing.runId).map((l) => [l.msg, l.hasFailures])).toEqual([
      ['run finished', true],
    ]);
  });

  it('times a run out at job.timeoutMs', async () => {
    const runner = new ControlledRunner(false);
    const { stub, daemon } = await setup({ runner });
    await daemon.start();
    const got = delivered(daemon, 1);
    stub.addJob(makeJob({ timeoutMs: 50 }));
    await got;
    expect(stub.stored[0]?.hasFailures).toBe(true);
    expect(stub.stored[0]?.isCancelled).toBe(false);
    expect(stub.stored[0]?.error).toMatch(/limit of 50 ms/);
  });

  it('spools results while the service fails and delivers each once, in order, when it recovers', async () => {
    const { stub, daemon, spool } = await setup({ uptimeConcurrency: 1 });
    await daemon.start();
    stub.failWith.set(AGENT_PATHS.results, 503);
    const jobs = [makeJob(), makeJob(), makeJob()];
    let spooledCount = 0;
    const allSpooled = new Promise<void>((resolve) => {
      daemon.on('result-spooled', () => {
        spooledCount += 1;
        if (spooledCount === jobs.length) resolve();
      });
    });
    for (const j of jobs) stub.addJob(j);
    await allSpooled;
    expect(spool.size).toBe(3);
    expect(daemon.snapshot().spooled).toBe(3);

    const got = delivered(daemon, 3);
    stub.failWith.delete(AGENT_PATHS.results);
    expect(await got).toEqual(jobs.map((j) => j.runId));
    expect(stub.stored.map((r) => r.runId)).toEqual(jobs.map((j) => j.runId));
    expect(spool.size).toBe(0);
    // Attempts only ever went head-first: after the first success, each runId was sent once more at most.
    const firstOk = stub.resultAttempts.length - 3;
    expect(stub.resultAttempts.slice(firstOk)).toEqual(jobs.map((j) => j.runId));
  });

  it('keeps polling through transient lease failures', async () => {
    const { stub, daemon, recorder } = await setup();
    stub.failWith.set(AGENT_PATHS.lease, 503);
    await daemon.start();
    // Three failed lease calls in a row: each one a warn line, and the loop keeps going.
    await stub.until(() => stub.server.requests.filter((r) => r.path === AGENT_PATHS.lease).length >= 3);
    const got = delivered(daemon, 1);
    stub.failWith.delete(AGENT_PATHS.lease);
    const job = makeJob();
    stub.addJob(job);
    expect(await got).toEqual([job.runId]);
    const warns = recorder.lines.filter((l) => l.msg === 'lease request failed; retrying');
    expect(warns.length).toBeGreaterThanOrEqual(2);
    expect(warns.every((l) => l.level === 40)).toBe(true);
  });

  it('resumes results left in the spool by an earlier process before new ones', async () => {
    const dir = tempDir();
    const earlier = await ResultSpool.open({ dir, maxBytes: 1_000_000, log: recordingLogger().log });
    const old = makeJob();
    await earlier.append({
      agentId: 'old-agent',
      leaseId: old.leaseId,
      result: passingRunResult({
        runId: old.runId,
        checkId: old.check.id,
        responseTime: 1,
        agent: { id: 'old-agent', version: '0.0.0' },
      }),
    });
    const { stub, daemon } = await setup({ spoolDir: dir });
    const got = delivered(daemon, 2);
    await daemon.start();
    const fresh = makeJob();
    stub.addJob(fresh);
    expect(await got).toEqual([old.runId, fresh.runId]);
  });

  it('401 at register ends with EXIT.unauthorized and the clear message', async () => {
    const { stub, daemon, recorder } = await setup();
    stub.failWith.set(AGENT_PATHS.register, 401);
    await daemon.start();
    expect(await daemon.done).toBe(EXIT.unauthorized);
    const fatal = recorder.lines.find((l) => l.level === 60);
    expect(fatal?.msg).toBe(
      `API_KEY was rejected by the service at ${stub.url}: the key is wrong or was revoked; create a new key with POST /v1/private-locations/{id}/keys and restart`,
    );
    expect(recorder.raw.join('')).not.toContain(KEY);
  });
});

describe('AgentDaemon through an outage of the service', () => {
  it('reconnects within the short cap after many connection failures, and drains the spool before it leases again', async () => {
    // At the top of every jitter. Under one long cap these waits double (0.2, 0.4, … 6.4 s, then 12.7 s):
    // the slow return the short cap for an unreachable service exists to prevent.
    const shortCap = 400;
    const { stub, daemon, spool, runner, job } = await heldRun({
      backoff: { baseMs: 200, capMs: 60_000, unreachableCapMs: shortCap, random: () => 0.99 },
    });

    const leaseRetries: Array<{ delayMs: number; unreachable: boolean }> = [];
    const sixFailures = new Promise<void>((resolve) => {
      daemon.on('retrying', (e) => {
        if (e.call !== 'lease') return;
        leaseRetries.push(e);
        if (leaseRetries.length === 6) resolve();
      });
    });
    await stub.stop();
    await sixFailures;
    // A run that ends during the outage: its result waits in the spool.
    const spooled = once(daemon, 'result-spooled');
    runner.finish(job.runId);
    await spooled;
    expect(spool.size).toBe(1);
    expect(leaseRetries.every((r) => r.unreachable && r.delayMs <= shortCap)).toBe(true);

    const backAt = Date.now();
    const before = stub.server.requests.length;
    await stub.restart();
    const pathsSinceBack = () => stub.server.requests.slice(before).map((r) => r.path);
    await stub.until(() => pathsSinceBack().includes(AGENT_PATHS.lease));
    const paths = pathsSinceBack();
    // Bounded by the short cap (plus room for a loaded machine), not by the grown long backoff.
    expect(Date.now() - backAt).toBeLessThan(shortCap * 2 + 3_000);
    // The spooled result went first, then new work was asked for.
    expect(paths.indexOf(AGENT_PATHS.results)).toBeGreaterThanOrEqual(0);
    expect(paths.indexOf(AGENT_PATHS.results)).toBeLessThan(paths.indexOf(AGENT_PATHS.lease));
    expect(stub.stored.map((r) => r.runId)).toEqual([job.runId]);
    expect(spool.size).toBe(0);
  });

  it('a result the service keeps refusing slows leasing down but does not stop it', async () => {
    const { stub, daemon, spool } = await setup();
    await daemon.start();
    stub.failWith.set(AGENT_PATHS.results, 503);
    const spooled = once(daemon, 'result-spooled');
    stub.addJob(makeJob());
    await spooled;
    expect(spool.size).toBe(1);
    // The spool never empties, yet after the bound (the stub's maxWaitSeconds, 1 s) the next job is leased.
    const next = makeJob();
    const started = once(daemon, 'job-started');
    stub.addJob(next);
    const [job] = (await started) as [{ runId: string }];
    expect(job.runId).toBe(next.runId);
    expect(spool.size).toBeGreaterThanOrEqual(1);
  });

  it('honours the Retry-After of a 503 to lease', async () => {
    const { stub, daemon } = await setup({ backoff: { baseMs: 10, capMs: 60_000, unreachableCapMs: 50 } });
    stub.failWith.set(AGENT_PATHS.lease, 503);
    stub.retryAfter.set(AGENT_PATHS.lease, '1');
    const retry = once(daemon, 'retrying');
    await daemon.start();
    const [e] = (await retry) as [{ call: string; delayMs: number; unreachable: boolean }];
    expect(e).toMatchObject({ call: 'lease', unreachable: false });
    // The wait asked for, plus jitter over the short cap.
    expect(e.delayMs).toBeGreaterThanOrEqual(1_000);
    expect(e.delayMs).toBeLessThanOrEqual(1_050);
  });

  it('counts a corrupt spooled result it removes in droppedResults', async () => {
    const dir = tempDir();
    writeFileSync(join(dir, '0000000000000001.json'), '{"agentId":"a","leaseId":"l","resu');
    const { daemon, spool } = await setup({ spoolDir: dir });
    expect(spool.size).toBe(1);
    const empty = once(spool, 'empty');
    await daemon.start();
    await empty;
    expect(daemon.snapshot().droppedResults).toBe(1);
  });
});

describe('AgentDaemon shutdown', () => {
  it('readiness goes 503 at once; a job finishing within grace is delivered; then deregister', async () => {
    const runner = new ControlledRunner(false);
    const { stub, daemon } = await setup({ runner });
    const health: HealthServer = await startHealthServer({ host: '127.0.0.1', port: 0, source: daemon });
    cleanups.push(() => health.close());
    const readiness = async () => (await fetch(`http://127.0.0.1:${health.port}/-/readiness`)).status;

    expect(await readiness()).toBe(503);
    await daemon.start();
    expect(await readiness()).toBe(200);
    const job = await startJob(stub, daemon);

    const stopping = once(daemon, 'stopping');
    const stopped = daemon.stop('test');
    await stopping;
    expect(daemon.isReady()).toBe(false);
    expect(await readiness()).toBe(503);

    const got = delivered(daemon, 1);
    runner.finish(job.runId);
    await got;
    expect(await stopped).toBe(EXIT.ok);
    expect(stub.stored.map((r) => r.runId)).toEqual([job.runId]);
    expect(stub.releases).toEqual([]);
    expect(stub.deregistered).toBe(1);
  });

  it('with grace 0 the unfinished run is aborted and its lease released, not submitted', async () => {
    const { stub, daemon, runner, job } = await heldRun({ shutdownGraceSeconds: 0 });
    expect(await daemon.stop('test')).toBe(EXIT.ok);
    expect(stub.releases).toEqual([
      { agentId: daemon.agentId, leases: [{ runId: job.runId, leaseId: job.leaseId, reason: 'agent shutting down' }] },
    ]);
    expect(runner.aborted).toEqual([job.check.id]);
    expect(stub.stored).toEqual([]);
    expect(stub.deregistered).toBe(1);
  });

  it('stop() cuts the long-poll at once', async () => {
    const { stub, daemon } = await setup({ stub: { maxWaitSeconds: 60 } });
    await daemon.start();
    await stub.until(() => stub.leaseRequests.length > 0);
    const t0 = Date.now();
    await daemon.stop('test');
    expect(Date.now() - t0).toBeLessThan(5_000);
  });

  it('results that cannot be sent at shutdown stay in the spool for the next start', async () => {
    const dir = tempDir();
    const { stub, daemon, spool } = await setup({ spoolDir: dir });
    await daemon.start();
    stub.failWith.set(AGENT_PATHS.results, 503);
    const spooled = once(daemon, 'result-spooled');
    stub.addJob(makeJob());
    await spooled;
    await daemon.stop('test');
    expect(spool.size).toBe(1);
    const reopened = await ResultSpool.open({ dir, maxBytes: 1_000_000, log: recordingLogger().log });
    expect(reopened.size).toBe(1);
  });
});
