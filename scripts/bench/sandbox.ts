/**
 * What the sandbox adds to a setup script's run: the same small script (reads the request, sets a
 * header, logs a line) run in a warm sandbox from the pool — acquire, run the step, end the process
 * so its log is complete — against compiling and running it in this process. Between runs the pool
 * is allowed to refill (as it does between jobs), so each run takes a warm sandbox; the cold start
 * that the pool hides is reported beside it.
 *
 *   npm run bench -- sandbox [--runs 200] [--pool 2] [--runtime 2026.04]
 *
 * The sandboxes are isolated as the agent's would be (SANDBOX_ISOLATION, default auto: a uid of their
 * own when this process may switch uids); `isolation` in the output says which.
 */
import { Writable } from 'node:stream';
import { parseArgs } from 'node:util';
import vm from 'node:vm';
import { defaultRuntimesDir, discoverRuntimes } from '../../src/agent/runtimes.ts';
import { detectIsolation, loadIsolationSettings } from '../../src/agent/sandbox/isolation.ts';
import { SandboxPool } from '../../src/agent/sandbox/pool.ts';
import { SandboxProcess } from '../../src/agent/sandbox/process.ts';
import { DEFAULT_SANDBOX_LIMITS } from '../../src/agent/sandbox/types.ts';
import { ConfigError } from '../../src/shared/errors.ts';
import { summarize } from './_stats.ts';

const SCRIPT = `const id = process.env.BENCH_ID;
request.headers['x-request-id'] = id + '-' + request.url.length;
console.log('setup ran for', request.url);`;

async function waitWarm(pool: SandboxPool, runtimeId: string, size: number): Promise<void> {
  for (let i = 0; i < 2000 && pool.warmCount(runtimeId) < size; i++) await new Promise((r) => setTimeout(r, 5));
}

/** The in-process baseline: the same wrapper the sandbox's bootstrap uses, console to a sink. */
async function inProcess(): Promise<number> {
  const t0 = performance.now();
  const sink = new console.Console(new Writable({ write: (_c, _e, cb) => cb() }));
  const script = new vm.Script(`(async function (request, console) {\n${SCRIPT}\n})`, {
    filename: 'setup.js',
    lineOffset: -1,
  });
  const fn = script.runInThisContext() as (req: unknown, c: Console) => Promise<void>;
  process.env.BENCH_ID = 'b';
  const request = JSON.parse(
    JSON.stringify({ method: 'GET', url: 'http://127.0.0.1/x', headers: {}, queryParameters: {}, body: '' }),
  );
  await fn(request, sink);
  JSON.stringify({ request });
  return performance.now() - t0;
}

function wholeFlag(flag: string, text: string | undefined, fallback: number): number {
  const n = text === undefined ? fallback : Number(text);
  if (!Number.isInteger(n) || n <= 0)
    throw new ConfigError(flag, `${flag} ${JSON.stringify(text)}: use a positive whole number`);
  return n;
}

export async function run(args: string[]): Promise<Record<string, unknown>> {
  const { values } = parseArgs({
    args,
    options: { runs: { type: 'string' }, pool: { type: 'string' }, runtime: { type: 'string' } },
    strict: true,
  });
  const runs = wholeFlag('--runs', values.runs, 200);
  const size = wholeFlag('--pool', values.pool, 2);
  const found = await discoverRuntimes(process.env.RUNTIMES_DIR ?? defaultRuntimesDir());
  const runtime = found.runtimes.find((r) => r.id === (values.runtime ?? '2026.04'));
  if (!runtime)
    throw new ConfigError(
      '--runtime',
      `runtime ${values.runtime ?? '2026.04'} is not installed; run npm run runtimes:install`,
    );
  const isolation = await detectIsolation(loadIsolationSettings(process.env));

  // Cold start, for reference: what a job would pay without the pool.
  const cold: number[] = [];
  for (let i = 0; i < 10; i++) {
    const t0 = performance.now();
    const s = await SandboxProcess.start({ runtime, limits: DEFAULT_SANDBOX_LIMITS, permissions: true, isolation });
    await s.ready();
    cold.push(performance.now() - t0);
    await s.dispose();
  }

  const pool = new SandboxPool({ runtimes: [runtime], size, isolation });
  await pool.fill();
  const sandboxed: number[] = [];
  const baseline: number[] = [];
  const added: number[] = [];
  const acquireMs: number[] = [];
  const stepMs: number[] = [];
  const endMs: number[] = [];
  const cleanups: Promise<void>[] = [];
  try {
    for (let i = 0; i < runs; i++) {
      await waitWarm(pool, runtime.id, size);
      const t0 = performance.now();
      const sandbox = await pool.acquire(runtime.id);
      const t1 = performance.now();
      const outcome = await sandbox.run(
        {
          stage: 'setup',
          filename: 'setup.js',
          code: SCRIPT,
          env: { BENCH_ID: 'b' },
          context: {
            request: { method: 'GET', url: 'http://127.0.0.1/x', headers: {}, queryParameters: {}, body: '' },
          },
        },
        { timeoutMs: 10_000 },
      );
      const t2 = performance.now();
      sandbox.finish();
      const t3 = performance.now();
      if (outcome.kind !== 'ok' || sandbox.output().lines.length !== 1)
        throw new Error(`run ${i} failed: ${JSON.stringify(outcome)}`);
      cleanups.push(sandbox.dispose());
      const base = await inProcess();
      sandboxed.push(t3 - t0);
      baseline.push(base);
      added.push(t3 - t0 - base);
      acquireMs.push(t1 - t0);
      stepMs.push(t2 - t1);
      endMs.push(t3 - t2);
    }
  } finally {
    await Promise.all(cleanups);
    await pool.close();
  }
  const addedStats = summarize(added);
  return {
    workload: `setup script (read request, set a header, one console line) on runtime ${runtime.id} (Node ${runtime.nodeVersion}), warm pool of ${size}`,
    runs,
    isolation: isolation.kind,
    addedMs: addedStats,
    sandboxMs: summarize(sandboxed),
    inProcessMs: summarize(baseline),
    breakdownP50Ms: {
      acquire: summarize(acquireMs).p50,
      step: summarize(stepMs).p50,
      processEnd: summarize(endMs).p50,
    },
    coldStartMs: summarize(cold),
    target: 'added p50 <= 5 ms',
    pass: addedStats.p50 <= 5,
  };
}
