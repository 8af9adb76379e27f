/**
 * The service's CPU and SQLite time per run, in one process: `checks` runs enqueued, leased in
 * batches and their results posted in batches of 100, as one agent does, `cycles` times to warm the
 * store, then once measured. Every SQLite statement of the measured cycle is timed, so the line
 * names the statements a run costs, most expensive first.
 *
 *   npm run bench -- dispatch-sql [--checks 8000] [--cycles 6] [--top 12]
 */
import { performance } from 'node:perf_hooks';
import { DatabaseSync } from 'node:sqlite';
import { SqliteDatabase } from '../../src/service/store/sql/sqlite-database.ts';
import { AGENT_PATHS, type Job } from '../../src/shared/protocol.ts';
import { resultFor, startHarness } from '../../test/helpers/dispatch-harness.ts';
import { numberFlags, roundTo } from './_stats.ts';

type Harness = Awaited<ReturnType<typeof startHarness>>;
type Tenant = Awaited<ReturnType<Harness['tenant']>>;
type Agent = Awaited<ReturnType<Harness['agent']>>;
type Check = Awaited<ReturnType<Harness['check']>>;
interface Timing {
  n: number;
  ms: number;
}

/** Times every statement SQLite runs while `timings.on`, keyed by method and statement text. */
class StatementTimer {
  on = false;
  readonly byStatement = new Map<string, Timing>();

  install(): void {
    for (const method of ['all', 'get', 'run', 'exec'] as const) this.#wrap(SqliteDatabase.prototype, method, method);
    // BEGIN and COMMIT go to node:sqlite directly.
    this.#wrap(DatabaseSync.prototype, 'exec', 'raw');
  }

  #wrap(proto: object, method: string, label: string): void {
    const target = proto as Record<string, (this: unknown, sql: string, ...rest: unknown[]) => unknown>;
    const original = target[method];
    if (!original) throw new Error(`no ${method} to time`);
    const timer = this;
    target[method] = function (this: unknown, sql: string, ...rest: unknown[]) {
      if (!timer.on) return original.call(this, sql, ...rest);
      const started = performance.now();
      try {
        return original.call(this, sql, ...rest);
      } finally {
        timer.#add(`${label} ${sql.replace(/\s+/g, ' ').trim().slice(0, 100)}`, performance.now() - started);
      }
    };
  }

  #add(key: string, ms: number): void {
    const timing = this.byStatement.get(key) ?? { n: 0, ms: 0 };
    timing.n++;
    timing.ms += ms;
    this.byStatement.set(key, timing);
  }
}

/** One scheduling interval: every check due, leased, and its result stored. Returns CPU ms per run. */
async function cycle(h: Harness, tenant: Tenant, agent: Agent, checks: Check[]): Promise<number> {
  const cpu = process.cpuUsage();
  await h.dispatcher.enqueueDue(
    checks.map((check) => ({ check, locationId: tenant.location.id, dueAtMs: h.clock.now })),
  );
  const jobs: Job[] = [];
  for (
    let got = await agent.lease({ slots: { uptime: 100 } });
    got.length > 0;
    got = await agent.lease({ slots: { uptime: 100 } })
  ) {
    jobs.push(...got);
  }
  if (jobs.length !== checks.length) throw new Error(`leased ${jobs.length} of ${checks.length} runs`);
  for (let i = 0; i < jobs.length; i += 100) {
    const results = jobs
      .slice(i, i + 100)
      .map((job) => ({ leaseId: job.leaseId, result: resultFor(job, agent.agentId) }));
    const res = await agent.post(AGENT_PATHS.resultBatches, { agentId: agent.agentId, results });
    if (res.statusCode !== 200) throw new Error(`result batch: ${res.statusCode} ${res.body}`);
  }
  h.clock.now += 10_000;
  const used = process.cpuUsage(cpu);
  return (used.user + used.system) / 1000 / checks.length;
}

export async function run(args: string[]): Promise<Record<string, unknown>> {
  const { checks: count, cycles, top } = numberFlags(args, { checks: 8000, cycles: 6, top: 12 });
  const h = await startHarness({ metrics: true, retries: true });
  try {
    const tenant = await h.tenant();
    const agent = await h.agent(tenant);
    const checks: Check[] = [];
    for (let i = 0; i < count; i++) checks.push(await h.check(tenant, { name: `check ${i}` }));
    const warmCpuMs: number[] = [];
    for (let i = 0; i < cycles; i++) warmCpuMs.push(roundTo(await cycle(h, tenant, agent, checks), 4));
    const timer = new StatementTimer();
    timer.install();
    timer.on = true;
    const cpuMsPerRun = await cycle(h, tenant, agent, checks);
    timer.on = false;
    const rows = [...timer.byStatement.entries()].sort((a, b) => b[1].ms - a[1].ms);
    const sum = (f: (t: Timing) => number) => rows.reduce((acc, [, t]) => acc + f(t), 0);
    return {
      checks: count,
      cycles,
      warmCpuMsPerRun: warmCpuMs,
      cpuMsPerRun: roundTo(cpuMsPerRun, 4),
      sqlMsPerRun: roundTo(sum((t) => t.ms) / count, 4),
      statementsPerRun: roundTo(sum((t) => t.n) / count, 2),
      top: rows
        .slice(0, top)
        .map(([statement, t]) => ({ statement, msPerRun: roundTo(t.ms / count, 4), perRun: roundTo(t.n / count, 2) })),
    };
  } finally {
    await h.close();
  }
}
