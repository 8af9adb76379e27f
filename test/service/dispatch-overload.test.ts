/**
 * Overload over the agent API on loopback: a location offered twice what its agent can run, then
 * less than that. Overloaded, it serves the newest runs first and sheds the old ones. A real SQLite store and HTTP server; the test plays the scheduler (each second it
 * enqueues the runs that come due, as Scheduler#fire does) and moves the dispatcher's clock, so time
 * passes when the test says and nothing waits for it.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { SHED_LATE_REASON } from '../../src/service/store/repos/runs.ts';
import type { Run, StoredCheck } from '../../src/service/store/store.ts';
import { AGENT_PATHS, type Job } from '../../src/shared/protocol.ts';
import {
  type Harness,
  registrationBody,
  resultFor,
  startHarness,
  type TestTenant,
} from '../helpers/dispatch-harness.ts';
import { parsePromText, valueWithLabels } from '../helpers/prometheus-text.ts';
import { type FreshStore, storeBackends } from '../support/store-backends.ts';

const INTERVAL_MS = 10_000;
const CHECKS = 20;

let h: Harness;

afterEach(async () => {
  await h?.close();
});

/** An agent speaking HTTP to the service's port: one uptime slot, so it runs one check per call. */
async function loopbackAgent(tenant: TestTenant) {
  const agentId = crypto.randomUUID();
  const post = async (path: string, body: unknown) => {
    const res = await fetch(new URL(path, h.url), {
      method: 'POST',
      headers: { authorization: `Bearer ${tenant.key}`, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    expect(res.status, path).toBe(200);
    return res.json();
  };
  await post(AGENT_PATHS.register, registrationBody(agentId));
  return {
    /** Leases what one slot takes and stores its result at once; the job, or undefined when none. */
    async runOne(): Promise<Job | undefined> {
      const { jobs } = (await post(AGENT_PATHS.lease, { agentId, slots: { uptime: 1, heavy: 0 }, waitSeconds: 0 })) as {
        jobs: Job[];
      };
      const job = jobs[0];
      if (job) await post(AGENT_PATHS.results, { agentId, leaseId: job.leaseId, result: resultFor(job, agentId) });
      return job;
    },
  };
}

async function shedCounted(): Promise<number> {
  const samples = parsePromText(await h.metrics!.registry.metrics());
  return valueWithLabels(samples, 'outpost_service_runs_expired_total', { reason: 'start_deadline' }) ?? 0;
}

describe('overload', () => {
  it('sheds what the agent cannot start within half an interval, counts it, and is on time again within one interval of the load dropping', async () => {
    h = await startHarness({ listen: true, metrics: true });
    const t = await h.tenant();
    const checks: StoredCheck[] = [];
    for (let i = 0; i < CHECKS; i++)
      checks.push(await h.check(t, { name: `c${i}`, frequency: 0, frequencyOffset: INTERVAL_MS / 1000 }));
    const agent = await loopbackAgent(t);
    const t0 = h.clock.now;
    const enqueued: Run[] = [];
    const started = new Map<string, number>();
    /** One second: the runs due now are enqueued, and the agent runs one check. */
    const second = async (s: number, due: StoredCheck[]) => {
      h.clock.now = t0 + s * 1000;
      for (const check of due) enqueued.push(await h.dispatcher.enqueue(check, t.location.id, h.clock.now));
      const job = await agent.runOne();
      if (job) started.set(job.runId, h.clock.now - Date.parse(job.dueAt));
      return job;
    };

    // Three intervals at 2 runs due per second (each check every 10 s) against 1 run per second.
    const lateness: number[] = [];
    for (let s = 0; s < 30; s++) {
      const job = await second(s, [checks[(2 * s) % CHECKS]!, checks[(2 * s + 1) % CHECKS]!]);
      // The agent is never idle: what it delivers is its whole capacity.
      expect(job, `second ${s}`).toBeDefined();
      lateness.push(started.get(job!.runId) ?? Number.NaN);
    }
    expect(Math.max(...started.values())).toBeLessThanOrEqual(INTERVAL_MS / 2);
    // Once it has shed, the newest runs go first: in the last interval of the overload each run that
    // started had come due within the second, where earliest-deadline order starts each one close to
    // its deadline (half an interval late).
    expect(Math.max(...lateness.slice(20))).toBeLessThanOrEqual(1000);
    const shed = await endedExpired(enqueued);
    expect(shed.length).toBeGreaterThanOrEqual(20);
    expect(shed.every((r) => r.endReason === SHED_LATE_REASON)).toBe(true);
    expect(await shedCounted()).toBe(shed.length);
    // The queue holds at most half an interval of what is offered.
    expect((await h.store.runs.locationLoad(t.location.id)).queued).toBeLessThanOrEqual(10);

    // The load drops to half the capacity (checks 0–4, one run every 2 s) for two intervals.
    const dropAt = t0 + 30_000;
    for (let s = 30; s < 50; s++) await second(s, s % 2 === 0 ? [checks[(s / 2) % 5]!] : []);
    const dueAfterDrop = enqueued.filter((r) => Date.parse(r.dueAt) >= dropAt);
    const shedAfterDrop = new Set((await endedExpired(dueAfterDrop)).map((r) => r.runId));
    const late = dueAfterDrop.filter((r) => shedAfterDrop.has(r.runId) || (started.get(r.runId) ?? 0) > 0);
    const lastLateDue = Math.max(dropAt, ...late.map((r) => Date.parse(r.dueAt)));
    expect(lastLateDue - dropAt).toBeLessThan(INTERVAL_MS);
    // From then on every run started in the second it came due, and nothing is left waiting.
    const onTime = dueAfterDrop.filter((r) => Date.parse(r.dueAt) > lastLateDue);
    expect(onTime.length).toBeGreaterThanOrEqual(5);
    expect(onTime.every((r) => started.get(r.runId) === 0)).toBe(true);
    expect((await h.store.runs.locationLoad(t.location.id)).queued).toBe(0);
  });
});

describe('a run enqueued after its due time', () => {
  it('has half an interval from its enqueue, not from its due time (a slot a new leader enqueues late runs late, and is shed only after that)', async () => {
    h = await startHarness({ listen: true });
    const t = await h.tenant();
    const first = await h.check(t, { name: 'missed-1', frequency: 0, frequencyOffset: INTERVAL_MS / 1000 });
    const second = await h.check(t, { name: 'missed-2', frequency: 0, frequencyOffset: INTERVAL_MS / 1000 });
    const agent = await loopbackAgent(t);
    const dueAt = h.clock.now;
    // The slots came due while no replica led; the new leader enqueues them 7 s late.
    const enqueuedAt = dueAt + 7_000;
    h.clock.now = enqueuedAt;
    const runs = [
      await h.dispatcher.enqueue(first, t.location.id, dueAt),
      await h.dispatcher.enqueue(second, t.location.id, dueAt),
    ];
    // Past half an interval after the due time, within half an interval of the enqueue: handed out.
    h.clock.now = enqueuedAt + INTERVAL_MS / 2 - 1_000;
    const job = await agent.runOne();
    expect(job && runs.map((r) => r.runId)).toContain(job?.runId);
    expect(job?.dueAt).toBe(new Date(dueAt).toISOString());
    // Past half an interval after the enqueue: the other one is shed.
    h.clock.now = enqueuedAt + INTERVAL_MS / 2 + 1;
    expect(await agent.runOne()).toBeUndefined();
    const shed = await endedExpired(runs);
    expect(shed.map((r) => [r.runId, r.endReason])).toEqual([
      [runs.find((r) => r.runId !== job!.runId)!.runId, SHED_LATE_REASON],
    ]);
  });
});

/** Those of `runs` that ended expired, as GET /v1/check-runs/{id} reads them. */
async function endedExpired(runs: readonly Run[]): Promise<Run[]> {
  const now = await Promise.all(runs.map(async (r) => (await h.store.runs.get(r.runId))!));
  return now.filter((r) => r.state === 'expired');
}

/** outpost_service_runs_skipped_total{reason="overload"} and the start_deadline sheds, as /metrics shows them. */
async function skippedAndShed(): Promise<{ skipped: number; shed: number }> {
  const samples = parsePromText(await h.metrics!.registry.metrics());
  return {
    skipped: valueWithLabels(samples, 'outpost_service_runs_skipped_total', { reason: 'overload' }) ?? 0,
    shed: valueWithLabels(samples, 'outpost_service_runs_expired_total', { reason: 'start_deadline' }) ?? 0,
  };
}

describe.each(storeBackends())('admission under overload on $name', (backend) => {
  let fresh: FreshStore;
  afterEach(async () => {
    await h?.close();
    await fresh?.dispose();
  });

  it('enqueues about what the agents deliver, so they stay busy and far less is shed; every run is enqueued again within seconds of the load dropping', async () => {
    fresh = await backend.fresh();
    h = await startHarness({ metrics: true, openStore: () => fresh.open() });
    const t = await h.tenant();
    const checks: StoredCheck[] = [];
    for (let i = 0; i < 1000; i++)
      checks.push(await h.check(t, { name: `a${i}`, frequency: 0, frequencyOffset: INTERVAL_MS / 1000 }));
    const agent = await h.agent(t);
    const t0 = h.clock.now;
    /**
     * One second as the scheduler and an agent with 50 slots play it: the runs due at its start are
     * enqueued, and half a second on the agent leases and reports what it ran. What was enqueued and run.
     */
    const second = async (s: number, due: StoredCheck[]) => {
      h.clock.now = t0 + s * 1000;
      const enqueued = await h.dispatcher.enqueueDue(
        due.map((check) => ({ check, locationId: t.location.id, dueAtMs: h.clock.now })),
      );
      h.clock.now += 500;
      const jobs = await agent.lease({ slots: { uptime: 50, heavy: 0 } });
      if (jobs.length > 0) {
        const res = await agent.post(AGENT_PATHS.resultBatches, {
          agentId: agent.agentId,
          results: jobs.map((job) => ({ leaseId: job.leaseId, result: resultFor(job, agent.agentId) })),
        });
        expect(res.statusCode).toBe(200);
      }
      return { enqueued, jobs };
    };

    // 100 runs due a second (each check every 10 s) against 50 a second run.
    const busy: number[] = [];
    for (let s = 0; s < 40; s++) {
      const { jobs } = await second(s, checks.slice((s % 10) * 100, (s % 10) * 100 + 100));
      if (s >= 10) busy.push(jobs.length);
    }
    const before = await skippedAndShed();
    for (let s = 40; s < 60; s++) {
      const { jobs } = await second(s, checks.slice((s % 10) * 100, (s % 10) * 100 + 100));
      busy.push(jobs.length);
    }
    const during = await skippedAndShed();
    // The agent never waits for work: what it runs is its whole capacity.
    expect(Math.min(...busy)).toBe(50);
    // Of the 2,000 runs offered in the last 20 s about half could run; most of the rest was never
    // enqueued, and only the margin was shed (without admission, about 1,000 were shed).
    expect(during.skipped - before.skipped).toBeGreaterThan(600);
    expect(during.shed - before.shed).toBeLessThan(300);

    // The load drops to 20 runs a second (checks 0–199), under the agent's capacity, for two intervals.
    const dropAt = t0 + 60_000;
    const afterDrop: Array<{ dueAt: number; enqueued: number; started: number }> = [];
    for (let s = 60; s < 80; s++) {
      const { enqueued, jobs } = await second(s, checks.slice((s % 10) * 20, (s % 10) * 20 + 20));
      const ran = new Set(jobs.map((j) => j.runId));
      afterDrop.push({
        dueAt: t0 + s * 1000,
        enqueued: enqueued.length,
        started: enqueued.filter((r) => ran.has(r.runId)).length,
      });
    }
    // From two seconds after the drop every due run is enqueued again and starts at the next lease.
    const recovered = afterDrop.filter((a) => a.dueAt >= dropAt + 2000);
    expect(recovered.every((a) => a.enqueued === 20 && a.started === 20)).toBe(true);
    expect((await skippedAndShed()).skipped).toBe(
      during.skipped + afterDrop.slice(0, 2).reduce((n, a) => n + (20 - a.enqueued), 0),
    );
  });
});
