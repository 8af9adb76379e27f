/**
 * What the database of a fleet says about its runs (test/e2e/fleet.test.ts, rolling-restart.test.ts):
 * every run due before a cutoff final, with one result or its reason, no slot enqueued twice or
 * missing, and the due→start latency inside and outside the spans around each disturbance.
 */
import type pg from 'pg';
import type { Proc } from './harness.ts';

/** A kill or restart, from its first signal until the fleet was whole again. */
export interface Disturbance {
  from: number;
  to: number;
  what: string;
}

/** Which runs count as "around" a disturbance, and the checks' interval. */
export interface ExclusionWindow {
  /** Runs due this long before a disturbance may have been in flight on what died. */
  beforeMs: number;
  /** And this long after the fleet is whole again (new leader leading, every process back). */
  afterMs: number;
  intervalMs: number;
}

export const FLEET_WINDOW: ExclusionWindow = { beforeMs: 2_000, afterMs: 10_000, intervalMs: 10_000 };

/** Per process, how often each warning or error was logged (pino: level 40 and up). */
export function warningsOf(procs: Array<{ name: string; proc: Proc }>): Record<string, Record<string, number>> {
  const out: Record<string, Record<string, number>> = {};
  for (const { name, proc } of procs) {
    for (const line of proc.lines) {
      if (typeof line.level !== 'number' || line.level < 40) continue;
      const err = (line.err as { message?: string } | undefined)?.message;
      const key = err ? `${line.msg}: ${err}` : String(line.msg);
      out[name] ??= {};
      const counts = out[name];
      counts[key] = (counts[key] ?? 0) + 1;
    }
  }
  return out;
}

function p99(values: number[]): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((x, y) => x - y);
  return sorted[Math.min(sorted.length - 1, Math.ceil(sorted.length * 0.99) - 1)]!;
}

/**
 * What the database says about every run due before `cutoff`. Latency counts runs due from
 * `measuredFrom` on: before it, each new check ran once at its creation, and the checks were created
 * in bursts of API calls, which measures the bursts rather than the scheduler.
 */
export async function accounting(
  db: pg.Client,
  cutoff: string,
  measuredFrom: number,
  disturbances: Disturbance[],
  window: ExclusionWindow = FLEET_WINDOW,
) {
  const q = async <T>(text: string): Promise<T[]> => (await db.query(text, [cutoff])).rows as T[];
  const byState = Object.fromEntries(
    (
      await q<{ state: string; n: string }>('SELECT state, count(*) AS n FROM runs WHERE due_at < $1 GROUP BY state')
    ).map((r) => [r.state, Number(r.n)]),
  ) as Record<string, number>;
  const completedWithoutOneResult = await q(
    `SELECT r.run_id, count(x.run_id) AS results FROM runs r LEFT JOIN results x ON x.run_id = r.run_id
      WHERE r.due_at < $1 AND r.state = 'completed' GROUP BY r.run_id HAVING count(x.run_id) <> 1`,
  );
  const ended = await q<{ run_id: string; state: string; end_reason: string | null; due_at: string }>(
    `SELECT run_id, state, end_reason, due_at FROM runs WHERE due_at < $1 AND state IN ('expired', 'cancelled')`,
  );
  const resultsStoredTwice = await q(
    `SELECT x.run_id, count(*) AS n FROM results x JOIN runs r ON r.run_id = x.run_id WHERE r.due_at < $1 GROUP BY x.run_id HAVING count(*) > 1`,
  );
  const slotsEnqueuedTwice = await q(
    'SELECT check_id, location_id, due_at, count(*) AS n FROM runs WHERE due_at < $1 GROUP BY 1, 2, 3 HAVING count(*) > 1',
  );
  const runs = await q<{ check_id: string; location_id: string; due_at: string }>(
    'SELECT check_id, location_id, due_at FROM runs WHERE due_at < $1 ORDER BY check_id, location_id, due_at',
  );
  const lags = await q<{ due_at: string; payload: string }>(
    'SELECT r.due_at, x.payload FROM runs r JOIN results x ON x.run_id = r.run_id WHERE r.due_at < $1',
  );
  const excluded = (due: number) =>
    disturbances.some((d) => due >= d.from - window.beforeMs && due <= d.to + window.afterMs);
  // A hand-over may leave a run unrun (a new leader's catch-up run superseded by the pair's next slot
  // before an agent took it); nothing should end so in quiet times.
  const endedOutsideDisturbances = ended.filter((r) => !excluded(Date.parse(r.due_at)));
  const endedWithoutReason = ended.filter((r) => !r.end_reason);
  const inside: number[] = [];
  const outside: number[] = [];
  for (const row of lags) {
    const due = Date.parse(row.due_at);
    if (due < measuredFrom) continue;
    const lag = (JSON.parse(row.payload) as { scheduleLagMs: number }).scheduleLagMs;
    (excluded(due) ? inside : outside).push(lag);
  }
  return {
    byState,
    ended,
    endedOutsideDisturbances,
    completedWithoutOneResult,
    endedWithoutReason,
    resultsStoredTwice,
    slotsEnqueuedTwice,
    ...missingSlotsOf(runs, window.intervalMs),
    dueToStartMs: {
      excludedAroundDisturbances: { count: inside.length, p99: p99(inside), max: Math.max(...inside) },
      outside: { count: outside.length, p99: p99(outside), max: Math.max(...outside) },
    },
  };
}

/**
 * Gaps in each pair's slots. A new check's first run is at its creation (off its phase); from its
 * second run on, consecutive due times are one interval apart.
 */
function missingSlotsOf(runs: Array<{ check_id: string; location_id: string; due_at: string }>, intervalMs: number) {
  const byPair = new Map<string, number[]>();
  for (const r of runs) {
    const key = `${r.check_id}/${r.location_id}`;
    const list = byPair.get(key) ?? [];
    list.push(Date.parse(r.due_at));
    byPair.set(key, list);
  }
  const missingSlots: Array<{ pair: string; after: string; gapMs: number }> = [];
  for (const [pair, dues] of byPair) {
    for (let i = 2; i < dues.length; i++) {
      const gap = dues[i]! - dues[i - 1]!;
      if (gap !== intervalMs) missingSlots.push({ pair, after: new Date(dues[i - 1]!).toISOString(), gapMs: gap });
    }
  }
  return { pairs: byPair.size, missingSlots };
}
