/**
 * The service's CPU per stored result: `runs` leased runs' results posted over loopback, one per
 * `results` call (8 in flight, as the agent sends them) and in `result-batches` calls of 100 (2 in
 * flight), each mode against a fresh service process whose CPU is read from /proc.
 *
 *   npm run bench -- result-path [--runs 2000]
 *
 * OUTPOST_BENCH_PROFILE_DIR=<folder> also writes a CPU profile of each mode's submissions there
 * (scripts/bench/_profile.ts summarises one).
 */
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { createInterface } from 'node:readline';
import { AGENT_PATHS, type Job } from '../../src/shared/protocol.ts';
import { resultFor } from '../../test/helpers/dispatch-harness.ts';
import { cpuSeconds, numberFlags } from './_stats.ts';

interface Served {
  url: string;
  key: string;
  agentId: string;
  jobs: Job[];
}

type Mode = 'single' | 'batch';

/** Posts each of `bodies` with at most `inFlight` at once; throws on any answer but 200. */
async function postAll(served: Served, path: string, bodies: unknown[], inFlight: number): Promise<void> {
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < bodies.length) {
      const body = bodies[next++];
      const res = await fetch(new URL(path, served.url), {
        method: 'POST',
        headers: { authorization: `Bearer ${served.key}`, 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
      if (res.status !== 200) throw new Error(`${path}: ${res.status} ${await res.text()}`);
      await res.arrayBuffer();
    }
  };
  await Promise.all(Array.from({ length: inFlight }, worker));
}

function bodiesOf(served: Served, mode: Mode): unknown[] {
  const items = served.jobs.map((job) => ({ leaseId: job.leaseId, result: resultFor(job, served.agentId) }));
  if (mode === 'single') return items.map((item) => ({ agentId: served.agentId, ...item }));
  const batches = [];
  for (let i = 0; i < items.length; i += 100)
    batches.push({ agentId: served.agentId, results: items.slice(i, i + 100) });
  return batches;
}

async function measure(mode: Mode, runs: number): Promise<Record<string, number>> {
  const server = spawn(
    process.execPath,
    [new URL('./_result-path-server.ts', import.meta.url).pathname, String(runs)],
    {
      stdio: ['pipe', 'pipe', 'inherit'],
    },
  );
  const [line] = (await once(createInterface({ input: server.stdout }), 'line')) as [string];
  const served = JSON.parse(line) as Served;
  const bodies = bodiesOf(served, mode);
  server.stdin.write('profile\n');
  const pid = server.pid!;
  const cpu0 = cpuSeconds(pid);
  const t0 = performance.now();
  if (mode === 'single') await postAll(served, AGENT_PATHS.results, bodies, 8);
  else await postAll(served, AGENT_PATHS.resultBatches, bodies, 2);
  const wallMs = performance.now() - t0;
  const cpuMs = (cpuSeconds(pid) - cpu0) * 1000;
  server.stdin.end();
  await once(server, 'exit');
  return {
    cpuMsPerResult: Math.round((cpuMs / runs) * 1000) / 1000,
    resultsPerSecond: Math.round(runs / (wallMs / 1000)),
  };
}

export async function run(args: string[]): Promise<Record<string, unknown>> {
  const { runs } = numberFlags(args, { runs: 2000 });
  const single = await measure('single', runs);
  const batch = await measure('batch', runs);
  return { runs, single, batch };
}
