/**
 * Overload benchmark: the real service and one agent offered more sub-minute API checks than they can
 * run, then the load dropped. Reports offered against delivered results per second, the runs shed
 * (by reason), due→start of what ran, and how long after the drop every run started on time again.
 *
 *   npm run bench -- overload [--checks 4000] [--keep 500] [--duration 30] [--late-ms 1000]
 *
 * `--checks` at a 10 s interval is the offered load (4000 = 400/s); run `npm run bench -- e2e` first
 * to find the rate where results per second stop rising, and offer about twice that. After the
 * measured window all but `--keep` checks (they are in one check group) are deactivated with one
 * call, which also cancels their queued runs, so what must drain is the kept checks' own backlog.
 * Recovery is the time from that call to the due time of the last run of a kept check (due within two
 * intervals of it) that was shed, started more than `--late-ms` after its due time, had no result
 * an interval later, or was never enqueued (skipped under overload: a slot of the check's schedule
 * without a run); under one interval (10 s) meets the target.
 * Capacity is what `deliveredPerSecond` reads with `--checks` just below the rate where it stops rising.
 * With OUTPOST_BENCH_CPU_PROF_DIR set, the service writes a CPU profile there (`--cpu-prof`).
 */
import { DatabaseSync } from 'node:sqlite';
import { agentNodeFlags } from './_dist.ts';
import { startE2eStack } from './_e2e-stack.ts';
import { numberFlags, summarize } from './_stats.ts';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const INTERVAL_S = 10;

interface RunRow {
  check_id: string;
  due_at: string;
  state: string;
  end_reason: string | null;
  payload: string | null;
}

/** Runs that ended `expired`, by end reason (the texts are fixed per cause), in the store. */
function expiredByReason(db: DatabaseSync, fromIso: string, toIso: string): Record<string, number> {
  const rows = db
    .prepare(
      "SELECT end_reason, count(*) AS n FROM runs WHERE state = 'expired' AND finished_at >= ? AND finished_at < ? GROUP BY end_reason",
    )
    .all(fromIso, toIso) as Array<{ end_reason: string; n: number }>;
  return Object.fromEntries(rows.map((r) => [r.end_reason.replace(/\d+/g, 'N').slice(0, 80), r.n]));
}

/**
 * Where the offered work went: the runs due in the window by the state they are in now, and how long
 * after its due time each was enqueued (a service too busy to enqueue on time shows here).
 */
function runsDueIn(
  db: DatabaseSync,
  fromIso: string,
  toIso: string,
): { byState: Record<string, number>; dueToEnqueuedMs: ReturnType<typeof summarize> } {
  const rows = db
    .prepare('SELECT state, due_at, created_at FROM runs WHERE due_at >= ? AND due_at < ?')
    .all(fromIso, toIso) as Array<{
    state: string;
    due_at: string;
    created_at: string;
  }>;
  const byState: Record<string, number> = {};
  for (const r of rows) byState[r.state] = (byState[r.state] ?? 0) + 1;
  return { byState, dueToEnqueuedMs: summarize(rows.map((r) => Date.parse(r.created_at) - Date.parse(r.due_at))) };
}

/**
 * outpost_service_runs_expired_total by reason, and runs_skipped_total as `skipped_<reason>`, summed
 * over locations, from GET /metrics.
 */
async function shedCounters(serviceUrl: string): Promise<Record<string, number>> {
  const text = await (await fetch(`${serviceUrl}/metrics`)).text();
  const out: Record<string, number> = {};
  const series = /^outpost_service_runs_(expired|skipped)_total\{[^}]*reason="([^"]+)"[^}]*\} (\S+)$/gm;
  for (const [, family, reason, value] of text.matchAll(series)) {
    const key = family === 'skipped' ? `skipped_${reason}` : reason!;
    out[key] = (out[key] ?? 0) + Number(value);
  }
  return out;
}

const minus = (a: Record<string, number>, b: Record<string, number>) =>
  Object.fromEntries(Object.entries(a).map(([k, v]) => [k, v - (b[k] ?? 0)]));

/**
 * The kept checks' slots from the drop on that have no run: skipped under overload. Each check's
 * slots are an interval apart, anchored on any run it has from an interval before the drop on.
 */
function skippedSlots(rows: RunRow[], dropMs: number): RunRow[] {
  const end = dropMs + 2 * INTERVAL_S * 1000;
  const missing: RunRow[] = [];
  for (const runs of Map.groupBy(rows, (r) => r.check_id).values()) {
    const due = new Set(runs.map((r) => Date.parse(r.due_at)));
    const anchor = Date.parse(runs[0]!.due_at);
    const first = anchor + Math.ceil((dropMs - anchor) / (INTERVAL_S * 1000)) * INTERVAL_S * 1000;
    for (let slot = first; slot < end; slot += INTERVAL_S * 1000)
      if (!due.has(slot))
        missing.push({
          check_id: runs[0]!.check_id,
          due_at: new Date(slot).toISOString(),
          state: 'skipped',
          end_reason: null,
          payload: null,
        });
  }
  return missing;
}

/**
 * Seconds from the drop to the due time of the last run due after it that was shed, started late, has
 * no result yet at the end (still queued or leased two intervals on), or was never enqueued.
 */
function recoverySeconds(rows: RunRow[], dropMs: number, lateMs: number): number {
  let last = dropMs;
  for (const row of rows) {
    const lag = row.payload ? (JSON.parse(row.payload) as { scheduleLagMs: number }).scheduleLagMs : undefined;
    const late = row.state !== 'completed' || (lag !== undefined && lag > lateMs);
    if (late) last = Math.max(last, Date.parse(row.due_at));
  }
  return Math.round((last - dropMs) / 100) / 10;
}

export async function run(args: string[]): Promise<Record<string, unknown>> {
  const opts = numberFlags(args, { checks: 4000, keep: 500, duration: 30, 'late-ms': 1000 });
  if (opts.keep >= opts.checks) throw new Error('--keep must be below --checks: the drop deactivates the others');
  // OUTPOST_BENCH_CPU_PROF_DIR: the service writes a CPU profile there when it stops.
  const profDir = process.env.OUTPOST_BENCH_CPU_PROF_DIR;
  const stack = await startE2eStack(
    'overload',
    profDir ? { NODE_OPTIONS: `--cpu-prof --cpu-prof-dir=${profDir}` } : {},
  );
  const { api, service, target } = stack;
  await api.createLocation('bench');
  const location = await api.createLocation('overload');
  const agent = stack.startAgent(location.key, agentNodeFlags());
  try {
    await agent.waitForLog((l) => l.msg === 'registered; taking work');
    const excess = await api.ok<{ id: number }>('POST', '/v2/check-groups', { name: 'excess', activated: true });
    const body = (i: number) => ({
      name: `overload ${i}`,
      frequency: 0,
      frequencyOffset: INTERVAL_S,
      privateLocations: ['overload'],
      ...(i >= opts.keep ? { groupId: excess.id } : {}),
      request: {
        method: 'GET',
        url: `${target.url}/${i}`,
        assertions: [{ source: 'STATUS_CODE', comparison: 'EQUALS', property: '', target: '200' }],
      },
    });
    const created = await api.createApiChecks(Array.from({ length: opts.checks }, (_, i) => body(i)));
    const kept = JSON.stringify(created.slice(0, opts.keep).map((c) => c.id));
    // One interval so every pair has come due once, then the measured window.
    await sleep(INTERVAL_S * 1000);
    const shed0 = await shedCounters(service.url);
    const windowStart = new Date().toISOString();
    await sleep(opts.duration * 1000);
    const windowEnd = new Date().toISOString();
    const shed1 = await shedCounters(service.url);

    // The load is gone once the call returns (it unschedules every check of the group).
    await api.ok('PUT', `/v2/check-groups/${excess.id}`, { name: 'excess', activated: false });
    const dropMs = Date.now();
    // Runs due within two intervals of the drop are judged; each has had at least one more interval to finish.
    await sleep(3 * INTERVAL_S * 1000);

    const db = new DatabaseSync(`${stack.dataDir}/outpost.db`, { readOnly: true });
    const inWindow = db
      .prepare('SELECT payload FROM results WHERE created_at >= ? AND created_at < ?')
      .all(windowStart, windowEnd) as Array<{ payload: string }>;
    const expired = expiredByReason(db, windowStart, windowEnd);
    const due = runsDueIn(db, windowStart, windowEnd);
    // The kept checks' runs from an interval before the drop (to anchor each check's slots) to two after.
    const keptRuns = db
      .prepare(
        `SELECT r.check_id, r.due_at, r.state, r.end_reason, res.payload FROM runs r LEFT JOIN results res ON res.run_id = r.run_id
         WHERE r.due_at >= ? AND r.due_at < ? AND r.state <> 'cancelled' AND r.check_id IN (SELECT value FROM json_each(?))`,
      )
      .all(
        new Date(dropMs - INTERVAL_S * 1000).toISOString(),
        new Date(dropMs + 2 * INTERVAL_S * 1000).toISOString(),
        kept,
      ) as unknown as RunRow[];
    const afterDrop = keptRuns.filter((r) => Date.parse(r.due_at) >= dropMs);
    const skippedAfterDrop = skippedSlots(keptRuns, dropMs);
    db.close();
    const lags = inWindow.map((r) => (JSON.parse(r.payload) as { scheduleLagMs: number }).scheduleLagMs);
    return {
      intervalSeconds: INTERVAL_S,
      windowSeconds: opts.duration,
      offeredPerSecond: opts.checks / INTERVAL_S,
      deliveredPerSecond: Math.round((inWindow.length / opts.duration) * 10) / 10,
      shedByReason: minus(shed1, shed0),
      expiredByEndReason: expired,
      runsDueInWindow: due.byState,
      dueToEnqueuedMs: due.dueToEnqueuedMs,
      dueToStartMs: summarize(lags),
      offeredAfterDropPerSecond: opts.keep / INTERVAL_S,
      skippedAfterDrop: skippedAfterDrop.length,
      recoverySeconds: recoverySeconds([...afterDrop, ...skippedAfterDrop], dropMs, opts['late-ms']),
    };
  } finally {
    await stack.stop(agent);
  }
}
