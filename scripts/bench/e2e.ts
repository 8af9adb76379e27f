/**
 * End-to-end benchmark: the real service and a real agent process, a few hundred sub-minute API checks
 * against a local target. Reports the time from a run being due to its check starting, from check end to
 * result stored, results per second, and the agent's RSS and CPU idle and under load. Each second of
 * the window also gets its due→start p99, the longest event-loop stall of the service, the agent
 * and this process (which serves the target), and where runs were (`queuedRunsBySecond`: in the
 * service's queue, held by the agent, running, finished with the result not yet stored);
 * `lateByStageMs` says how late runs were when queued and when started.
 *
 *   npm run bench -- e2e [--checks 300] [--duration 30] [--idle 60] [--after 120] [--warmup 10] [--profile DIR]
 *
 * `--warmup` (seconds, one interval by default) is the wait between creating the checks and the
 * window. Each new check runs once at once, so creating 16,000 leaves a backlog that can take 20 s
 * to drain (`dueToStartP99BySecond` shows it); a longer warm-up keeps it out of the window.
 * `--after` is how long the agent's RSS is watched once the load ends (the checks deleted): memory a
 * burst took should come back within it. `--profile DIR` starts the agent with `--cpu-prof` writing
 * into DIR (read the profile with `node scripts/bench/_profile.ts DIR`).
 *
 * OUTPOST_BENCH_SERVICE_FLAGS (space-separated Node flags) starts the service with them, e.g.
 * `--cpu-prof --cpu-prof-dir=.bench/profiles` for a profile (scripts/bench/_profile.ts summarises it).
 *
 * The idle windows are a minute long: V8 tiers up WebAssembly (undici's HTTP parser) about 50 s after
 * start unless the agent's flags say otherwise, and a shorter window would miss what that keeps.
 */
import path from 'node:path';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { DatabaseSync } from 'node:sqlite';
import { agentNodeFlags, ROOT, serviceNodeFlags } from './_dist.ts';
import { startE2eStack } from './_e2e-stack.ts';
import { cpuSeconds, metricSum, metricValue, numberFlags, rssMb, summarize } from './_stats.ts';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** `--profile DIR` (taken out before the numeric flags are read): where the agent's CPU profile goes. */
function profileFlag(args: string[]): { dir: string | undefined; rest: string[] } {
  const i = args.indexOf('--profile');
  if (i === -1) return { dir: undefined, rest: args };
  const dir = args[i + 1];
  if (!dir || dir.startsWith('--'))
    throw new Error('--profile: name the directory the agent writes its .cpuprofile into');
  return { dir: path.resolve(dir), rest: [...args.slice(0, i), ...args.slice(i + 2)] };
}

/** RSS of `pid` every 5 s for `seconds`, and the first second at which it was under `underMb` (null: never). */
async function rssAfterLoad(
  pid: number,
  seconds: number,
  underMb: number,
): Promise<{ samples: number[]; secondsToUnder: number | null; end: number }> {
  const samples: number[] = [];
  let secondsToUnder: number | null = null;
  for (let t = 0; t <= seconds; t += 5) {
    const mb = rssMb(pid);
    samples.push(mb);
    if (secondsToUnder === null && mb < underMb) secondsToUnder = t;
    if (t < seconds) await sleep(5000);
  }
  return { samples, secondsToUnder, end: samples.at(-1) ?? Number.NaN };
}

/**
 * Where the agent's memory is, in MB, from its /metrics (prom-client's process and heap figures):
 * the V8 heap reserved and used, and memory outside it (buffers, native).
 */
async function memoryBreakdown(healthPort: number): Promise<Record<string, number>> {
  const text = await (await fetch(`http://127.0.0.1:${healthPort}/metrics`)).text();
  const mb = (name: string) => Math.round((metricValue(text, name) / 1048576) * 10) / 10;
  return {
    heapTotal: mb('nodejs_heap_size_total_bytes'),
    heapUsed: mb('nodejs_heap_size_used_bytes'),
    external: mb('nodejs_external_memory_bytes'),
  };
}

/** Runs the agent has finished so far: the count of its check-duration histogram, every label summed. */
async function runsFinished(healthPort: number): Promise<number> {
  const text = await (await fetch(`http://127.0.0.1:${healthPort}/metrics`)).text();
  // No series before the first run ends: none finished.
  const n = metricSum(text, 'outpost_agent_check_duration_seconds_count');
  return Number.isNaN(n) ? 0 : n;
}

/**
 * Once a second: the longest event-loop stall of the service, the agent and this process (which
 * serves the target) since the last call, in ms, and where runs wait. prom-client's lag histogram
 * restarts at each scrape, so scraping once a second gives each second's worst stall. A due→start
 * spike with a stall beside it points at that process; one without, at CPU contention between them.
 * Runs waiting in the service's queue (not yet leased) against runs the agent holds before it
 * starts them (due later, or waiting for a slot) say which side a standing lag is on.
 */
function secondSampler(serviceUrl: string, healthPort: number) {
  const target = monitorEventLoopDelay({ resolution: 10 });
  target.enable();
  const text = async (url: string) => (await fetch(url)).text();
  return async () => {
    const [service, agent] = await Promise.all([
      text(`${serviceUrl}/metrics`),
      text(`http://127.0.0.1:${healthPort}/metrics`),
    ]);
    const ms = (seconds: number) => Math.round(seconds * 1000);
    const stalls = {
      service: ms(metricValue(service, 'outpost_service_nodejs_eventloop_lag_max_seconds')),
      agent: ms(metricValue(agent, 'nodejs_eventloop_lag_max_seconds')),
      target: Math.round(target.max / 1e6),
    };
    target.reset();
    const queues = {
      serviceQueued: metricSum(service, 'outpost_service_queue_depth'),
      agentHeld: metricSum(agent, 'outpost_agent_jobs_queued'),
      agentRunning: metricSum(agent, 'outpost_agent_jobs_running'),
      // Finished runs whose results the service has not yet taken (in memory or in upload): the
      // agent stops leasing while more than its slots wait (docs/protocol.md "Overload").
      agentResultsUnsent:
        metricSum(agent, 'outpost_agent_check_duration_seconds_count') -
        metricSum(agent, 'outpost_agent_results_sent_total') -
        metricSum(agent, 'outpost_agent_results_rejected_total'),
    };
    return { stalls, queues };
  };
}

interface RunPayload {
  scheduleLagMs: number;
  startedAt: string;
  stoppedAt: string;
  hasFailures: boolean;
}

/** A result stored in the window, with its run's due and queueing times (null when the run was pruned). */
interface ResultRow {
  created_at: string;
  payload: string;
  due_at: string | null;
  enqueued_at: string | null;
}

/**
 * How late each run was, past its due time, when the service queued it and when the agent started
 * it: a lag already there at queueing is the scheduler's, one that appears after it is the lease's or
 * the agent's (`queuedRunsBySecond` tells which queue held the runs).
 */
function lateByStage(rows: ResultRow[], payloads: RunPayload[]) {
  const stages = { enqueued: [] as number[], started: [] as number[] };
  for (const [i, row] of rows.entries()) {
    if (!row.due_at || !row.enqueued_at) continue;
    const due = Date.parse(row.due_at);
    stages.enqueued.push(Math.max(0, Date.parse(row.enqueued_at) - due));
    stages.started.push(Math.max(0, Date.parse(payloads[i]!.startedAt) - due));
  }
  return { enqueued: summarize(stages.enqueued), started: summarize(stages.started) };
}

/** The highest VmRSS of `pid` sampled once a second for `seconds` seconds. */
async function maxRssOver(pid: number, seconds: number): Promise<number> {
  const samples: number[] = [];
  for (let t = 0; t < seconds; t++) {
    samples.push(rssMb(pid));
    await sleep(1000);
  }
  return Math.max(...samples);
}

export async function run(args: string[]): Promise<Record<string, unknown>> {
  const profile = profileFlag(args);
  const opts = numberFlags(profile.rest, { checks: 300, duration: 30, idle: 60, after: 120, warmup: 10 });
  const stack = await startE2eStack('e2e', {}, serviceNodeFlags());
  const { api, target } = stack;
  const servicePid = stack.service.proc.child.pid!;
  const location = await api.createLocation('bench');
  // With the agent's own Node flags and malloc settings, as bin/outpost and the image start it (the
  // harness spawns node directly).
  const nodeFlags = agentNodeFlags();
  if (profile.dir) nodeFlags.push('--cpu-prof', `--cpu-prof-dir=${profile.dir}`);
  const agent = stack.startAgent(location.key, nodeFlags);
  try {
    // Registered and idle: nothing is scheduled yet. Let start-up settle, then measure a quiet period.
    const registered = await agent.waitForLog((l) => l.msg === 'registered; taking work');
    await sleep(2000);
    const pid = agent.child.pid!;
    const healthPort = Number((await agent.waitForLog((l) => l.msg === 'probes listening')).port);
    const idleCpu0 = cpuSeconds(pid);
    const idleRss = await maxRssOver(pid, opts.idle);
    const idleCpuPercent = ((cpuSeconds(pid) - idleCpu0) / opts.idle) * 100;

    const checkIds: string[] = [];
    for (let i = 0; i < opts.checks; i += 20) {
      const created = await Promise.all(
        Array.from({ length: Math.min(20, opts.checks - i) }, (_, j) =>
          api.createApiCheck({
            name: `bench ${i + j}`,
            frequency: 0,
            frequencyOffset: 10,
            privateLocations: ['bench'],
            request: {
              method: 'GET',
              url: `${target.url}/${i + j}`,
              assertions: [{ source: 'STATUS_CODE', comparison: 'EQUALS', property: '', target: '200' }],
            },
          }),
        ),
      );
      checkIds.push(...created.map((c) => c.id));
    }
    // At least one full interval of warm-up so every check has been scheduled once, then the window.
    await sleep(opts.warmup * 1000);
    const windowStart = new Date().toISOString();
    const loadRss: number[] = [];
    const loadCpu0 = cpuSeconds(pid);
    const serviceCpu0 = cpuSeconds(servicePid);
    const runs0 = await runsFinished(healthPort);
    const sampleSecond = secondSampler(stack.service.url, healthPort);
    await sampleSecond();
    const stalls = { service: [] as number[], agent: [] as number[], target: [] as number[] };
    const queues = {
      serviceQueued: [] as number[],
      agentHeld: [] as number[],
      agentRunning: [] as number[],
      agentResultsUnsent: [] as number[],
    };
    for (let t = 0; t < opts.duration * 2; t++) {
      loadRss.push(rssMb(pid));
      await sleep(500);
      if (t % 2 === 0) continue;
      const s = await sampleSecond();
      for (const k of ['service', 'agent', 'target'] as const) stalls[k].push(s.stalls[k]);
      for (const k of Object.keys(queues) as Array<keyof typeof queues>) queues[k].push(s.queues[k]);
    }
    const serviceCpuSeconds = cpuSeconds(servicePid) - serviceCpu0;
    const loadCpuSeconds = cpuSeconds(pid) - loadCpu0;
    const runsInWindow = (await runsFinished(healthPort)) - runs0;
    const memoryEndOfLoad = await memoryBreakdown(healthPort);
    const loadCpuPercent = (loadCpuSeconds / opts.duration) * 100;
    const windowEnd = new Date().toISOString();

    const db = new DatabaseSync(`${stack.dataDir}/outpost.db`, { readOnly: true });
    const rows = db
      .prepare(
        `SELECT r.created_at, r.payload, u.due_at, u.created_at AS enqueued_at
         FROM results r LEFT JOIN runs u ON u.run_id = r.run_id WHERE r.created_at >= ? AND r.created_at < ?`,
      )
      .all(windowStart, windowEnd) as unknown as ResultRow[];
    // Runs due in the window apart from the rest: a backlog shed while the checks were being created
    // is the set-up's, not the window's.
    const expired = db
      .prepare(
        "SELECT coalesce(sum(due_at >= ? AND due_at < ?), 0) AS window, count(*) AS total FROM runs WHERE state = 'expired'",
      )
      .get(windowStart, windowEnd) as { window: number; total: number };
    db.close();

    // Idle again after the load (the results are read first: deleting a check deletes its results). The
    // checks deleted, one interval for the last runs to end, then the same quiet period as at start. An
    // agent that has worked keeps what it loaded and compiled for the work (the API engine, optimised
    // code), so this is the idle figure of an agent in service.
    for (let i = 0; i < checkIds.length; i += 20) {
      await Promise.all(checkIds.slice(i, i + 20).map((id) => api.ok('DELETE', `/v1/checks/${id}`)));
    }
    await sleep(12_000);
    const idleAfterLoadRss = await maxRssOver(pid, opts.idle);
    // The target: back under 120 MB within two minutes of the load ending (counted from here,
    // after the last runs ended and the idle window above).
    const afterLoad = await rssAfterLoad(pid, opts.after, 120);
    const memoryAfterLoad = await memoryBreakdown(healthPort);

    const dueToStart: number[] = [];
    const dueToStartBySecond = new Map<number, number[]>();
    const endToStored: number[] = [];
    let failures = 0;
    const payloads = rows.map((row) => JSON.parse(row.payload) as RunPayload);
    const late = lateByStage(rows, payloads);
    for (const [i, row] of rows.entries()) {
      const p = payloads[i]!;
      dueToStart.push(p.scheduleLagMs);
      const second = Math.floor((Date.parse(p.startedAt) - Date.parse(windowStart)) / 1000);
      const lags = dueToStartBySecond.get(second) ?? [];
      lags.push(p.scheduleLagMs);
      dueToStartBySecond.set(second, lags);
      endToStored.push(Date.parse(row.created_at) - Date.parse(p.stoppedAt));
      if (p.hasFailures) failures++;
    }
    return {
      checks: opts.checks,
      intervalSeconds: 10,
      windowSeconds: opts.duration,
      results: rows.length,
      resultsPerSecond: Math.round((rows.length / opts.duration) * 10) / 10,
      failedResults: failures,
      // Expired runs due in the window, and those due before or after it (set-up, deletion).
      expiredRuns: expired.window,
      expiredRunsOutsideWindow: expired.total - expired.window,
      dueToStartMs: summarize(dueToStart),
      // p99 of each second of the window, by start time: a spike every few seconds points at a
      // periodic task (compare with the service's profile timeline), a flat line at steady load.
      dueToStartP99BySecond: [...dueToStartBySecond.entries()]
        .filter(([second]) => second >= 0 && second < opts.duration)
        .sort((a, b) => a[0] - b[0])
        .map(([, lags]) => summarize(lags).p99),
      // Each second's longest event-loop stall (ms) of each process, beside the p99 above.
      eventLoopStallMsBySecond: stalls,
      // Runs at each second: waiting in the service's queue, leased but not yet started, running,
      // finished with the result not yet stored.
      queuedRunsBySecond: queues,
      endToStoredMs: summarize(endToStored),
      lateByStageMs: late,
      agentEntry: stack.cli.replace(ROOT, ''),
      agentNodeFlags: nodeFlags,
      // Results per upload the agent may send (1: one per call, a service without result batches).
      agentResultBatchMax: registered.resultBatchMax ?? 1,
      agentRssMb: { idle: idleRss, loadPeak: Math.max(...loadRss), idleAfterLoad: idleAfterLoadRss },
      agentCpuPercent: { idle: Math.round(idleCpuPercent * 100) / 100, load: Math.round(loadCpuPercent * 10) / 10 },
      serviceCpuPercent: Math.round((serviceCpuSeconds / opts.duration) * 1000) / 10,
      serviceCpuMsPerResult:
        rows.length > 0 ? Math.round((serviceCpuSeconds * 1000 * 1000) / rows.length) / 1000 : null,
      serviceNodeFlags: serviceNodeFlags(),
      // Agent CPU during the measured window divided by the runs the agent finished in it (results
      // stored in the window would count a backlog of late results too).
      agentRunsInWindow: runsInWindow,
      agentCpuMsPerCheck: runsInWindow > 0 ? Math.round(((loadCpuSeconds * 1000) / runsInWindow) * 1000) / 1000 : null,
      agentRssAfterLoadMb: { everySeconds: 5, ...afterLoad },
      agentMemoryMb: { endOfLoad: memoryEndOfLoad, afterLoad: memoryAfterLoad },
      agentProfileDir: profile.dir ?? null,
    };
  } finally {
    await stack.stop(agent);
  }
}
