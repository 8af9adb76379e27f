/**
 * The agent side of the protocol benchmarks (api, tcp, dns, icmp), in a process of its own so that
 * its peak RSS is the check engine's alone: the benchmark process that drives blackbox_exporter, and
 * Node's TypeScript stripping, are not in it.
 *
 * The parent (runEngine) strips the types from this file into .bench/engine.mjs and starts it with
 * the agent's Node flags. The child loads the runners from the
 * compiled dist/, as the Docker image does, then talks over stdio, one JSON line each way:
 *   child  → {"ready": true}            modules loaded; the parent reads the baseline RSS
 *   parent → {"go": true}               run the warm-up and the measured closed loop
 *   child  → {"result": {...}}          the loop's figures; the parent reads VmHWM, then closes stdin
 * closedLoop is exported for the parent's blackbox side too, so both sides are driven alike.
 */

import { spawn } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { stripTypeScriptTypes } from 'node:module';
import { createInterface } from 'node:readline';
import { fileURLToPath, pathToFileURL } from 'node:url';
import PQueue from 'p-queue';
import type { CheckContext, CheckRunner } from '../../src/agent/checks/runner.ts';
import type { CheckDefinition, CheckType } from '../../src/shared/checks/types.ts';

export interface SideResult {
  probes: number;
  failures: number;
  probesPerSecond: number;
  latencyMs: { p50: number; p99: number };
}

function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return Number.NaN;
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))]!;
}

/** Runs `probe` for `seconds`, keeping exactly `concurrency` in flight (as the daemon's uptime queue does when busy). */
export async function closedLoop(
  concurrency: number,
  seconds: number,
  probe: () => Promise<boolean>,
): Promise<SideResult> {
  const queue = new PQueue({ concurrency });
  // A Float64Array, not a growing number[]: the driver should not add its own garbage to the figure.
  let latencies = new Float64Array(1 << 16);
  let n = 0;
  let failures = 0;
  const t0 = performance.now();
  const end = t0 + seconds * 1000;
  const task = async (): Promise<void> => {
    const s = performance.now();
    const ok = await probe().catch(() => false);
    if (n === latencies.length) {
      const bigger = new Float64Array(n * 2);
      bigger.set(latencies);
      latencies = bigger;
    }
    latencies[n++] = performance.now() - s;
    if (!ok) failures++;
  };
  // `concurrency` callers, each adding its next probe when its last one is done, so exactly that many
  // are in flight through the queue (not onSizeLessThan, whose abort signals per wake-up would add
  // the driver's own garbage to the engine's figures).
  const caller = async (): Promise<void> => {
    while (performance.now() < end) await queue.add(task);
  };
  await Promise.all(Array.from({ length: concurrency }, caller));
  const elapsed = (performance.now() - t0) / 1000;
  const sorted = Array.from(latencies.subarray(0, n)).sort((a, b) => a - b);
  const round = (x: number) => Math.round(x * 100) / 100;
  return {
    probes: n,
    failures,
    probesPerSecond: Math.round((n / elapsed) * 10) / 10,
    latencyMs: { p50: round(percentile(sorted, 50)), p99: round(percentile(sorted, 99)) },
  };
}

export interface EngineJob {
  /** dist/ directory (absolute, with a trailing slash). */
  dist: string;
  checkType: CheckType;
  check: CheckDefinition;
  concurrency: number;
  durationSeconds: number;
  warmupSeconds: number;
  /** Node flags for the engine process: the agent's own (see compare in _blackbox.ts). */
  nodeFlags: string[];
  /** Environment on top of this process's for the engine: the agent's malloc settings (bin/agent-env). */
  env: Record<string, string>;
}

export interface EngineResult extends SideResult {
  /** fping processes started during the warm-up and measured loop (ICMP only). */
  fpingProcesses?: number;
}

export interface EngineRun {
  result: EngineResult;
  /** VmRSS before the first check: Node plus the agent's modules. */
  baselineRssMb: number;
  /** VmHWM after the measured loop (warm-up included). */
  peakRssMb: number;
  /** Node flags the engine ran with (the agent's). */
  nodeFlags: string[];
}

function statusMb(pid: number, field: 'VmRSS' | 'VmHWM'): number {
  const kb = Number(
    new RegExp(`${field}:\\s+(\\d+)`).exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? Number.NaN,
  );
  return Math.round((kb / 1024) * 10) / 10;
}

/**
 * Writes this file, types stripped, to `<root>.bench/engine.mjs` and returns that path. The copy lives
 * under the repo (in the git-ignored .bench/) so that its bare imports (p-queue, pino) resolve from
 * the project's node_modules.
 */
export function writeEngineEntry(root: string): string {
  mkdirSync(`${root}.bench`, { recursive: true });
  const entry = `${root}.bench/engine.mjs`;
  writeFileSync(entry, stripTypeScriptTypes(readFileSync(fileURLToPath(import.meta.url), 'utf8')));
  return entry;
}

/** Parent side: starts the engine process, runs the job, returns its figures and its RSS from /proc. */
export async function runEngine(job: EngineJob): Promise<EngineRun> {
  const entry = writeEngineEntry(fileURLToPath(new URL('../..', import.meta.url)));
  const nodeFlags = job.nodeFlags;
  const child = spawn(process.execPath, [...nodeFlags, entry], {
    stdio: ['pipe', 'pipe', 'inherit'],
    env: { ...process.env, ...job.env },
  });
  const exited = new Promise<number | null>((resolve) => child.once('exit', resolve));
  const lines = createInterface({ input: child.stdout })[Symbol.asyncIterator]();
  const next = async (): Promise<Record<string, unknown>> => {
    for (;;) {
      const line = await Promise.race([lines.next(), exited.then((code) => ({ done: true, value: `exit ${code}` }))]);
      if (line.done) throw new Error(`bench engine stopped early (${line.value ?? 'closed'})`);
      // Node flags such as --trace-gc print on stdout too; pass those lines on.
      if ((line.value as string).startsWith('{')) return JSON.parse(line.value as string) as Record<string, unknown>;
      process.stderr.write(`engine: ${line.value}\n`);
    }
  };
  try {
    child.stdin.write(`${JSON.stringify(job)}\n`);
    await next();
    const baselineRssMb = statusMb(child.pid!, 'VmRSS');
    child.stdin.write('{"go":true}\n');
    const { result } = (await next()) as { result: EngineResult };
    const peakRssMb = statusMb(child.pid!, 'VmHWM');
    return { result, baselineRssMb, peakRssMb, nodeFlags };
  } finally {
    child.stdin.end();
    await Promise.race([exited, new Promise((r) => setTimeout(r, 5000))]);
    if (child.exitCode === null) child.kill('SIGKILL');
  }
}

/** Child side: the agent's runner from dist/, a silent logger, a closed loop. */
async function engineMain(): Promise<void> {
  const input = createInterface({ input: process.stdin })[Symbol.asyncIterator]();
  const read = async (): Promise<Record<string, unknown>> =>
    JSON.parse(((await input.next()).value as string | undefined) ?? 'null');
  const job = (await read()) as unknown as EngineJob;
  const { RUNNERS } = (await import(pathToFileURL(`${job.dist}agent/checks/index.js`).href)) as {
    RUNNERS: ReadonlyMap<CheckType, CheckRunner>;
  };
  const { default: pino } = await import('pino');
  const runner = RUNNERS.get(job.checkType);
  if (!runner) throw new Error(`no runner for ${job.checkType}`);
  // As the daemon gives each run: a signal, the run's time limit and a logger (silent here; the
  // runners log only at debug).
  const ctx: CheckContext = {
    signal: new AbortController().signal,
    timeoutMs: 10_000,
    log: pino({ level: 'silent' }),
    useOsDnsResolver: false,
  };
  const probe = async (): Promise<boolean> => !(await runner.run(job.check, ctx)).hasFailures;
  const batcher = (runner as { batcher?: { spawned: number; close(): void } }).batcher;
  process.stdout.write('{"ready":true}\n');
  await read();
  const spawnedBefore = batcher?.spawned ?? 0;
  await closedLoop(job.concurrency, job.warmupSeconds, probe);
  const result: EngineResult = await closedLoop(job.concurrency, job.durationSeconds, probe);
  if (batcher) {
    result.fpingProcesses = batcher.spawned - spawnedBefore;
    batcher.close();
  }
  process.stdout.write(`${JSON.stringify({ result })}\n`);
  // Stay alive until the parent has read the peak from /proc.
  await input.next();
  process.exit(0);
}

if (process.argv[1] && pathToFileURL(process.argv[1]).href === import.meta.url) await engineMain();
