/**
 * Outpost's side of `npm run bench -- prometheus`: the service and one agent from dist/ (as e2e runs
 * them: the agent with its own Node flags and malloc settings, INFO logs), N API checks every 10 s on
 * one private location, stepped up by adding checks; each step's window is read from the service's
 * SQLite store.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { DatabaseSync } from 'node:sqlite';
import type { StepFigures } from './_capacity.ts';
import { agentEnv, agentNodeFlags, BENCH_SERVICE_ENV, buildDist } from './_dist.ts';
import { INTERVAL_SECONDS } from './_prometheus.ts';
import { cpuSeconds, rssMb, summarize } from './_stats.ts';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * Starts `outpost <command>` and resolves with its first log line that contains `ready`. Unlike the
 * test harness's Proc, it keeps no log lines: at thousands of runs per second (a line each at INFO)
 * they would grow this process by hundreds of MB and take CPU from the two being measured.
 */
async function spawnOutpost(
  cli: string,
  command: string,
  env: Record<string, string>,
  nodeFlags: string[],
  ready: string,
): Promise<{ child: ChildProcess; line: Record<string, unknown> }> {
  const child = spawn(process.execPath, [...nodeFlags, cli, command], {
    env: { PATH: process.env.PATH ?? '', ...env },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const line = await new Promise<Record<string, unknown>>((resolve, reject) => {
    let buffered = '';
    const onData = (chunk: Buffer) => {
      const lines = (buffered + chunk.toString('utf8')).split('\n');
      buffered = lines.pop()!;
      const found = lines.find((l) => l.includes(ready));
      if (found === undefined) return;
      child.stdout!.off('data', onData);
      child.off('exit', onExit);
      resolve(JSON.parse(found) as Record<string, unknown>);
    };
    const onExit = (code: number | null) =>
      reject(new Error(`outpost ${command} exited (${code}) before logging "${ready}"`));
    child.stdout!.on('data', onData);
    child.once('exit', onExit);
  });
  // From here on its output is read and dropped.
  child.stdout!.resume();
  return { child, line };
}

async function stopProcess(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((r) => child.once('exit', r));
  child.kill('SIGTERM');
  await exited;
}

export interface OutpostStep extends StepFigures {
  /** Results of the runs started in the window and stored by the time it is read, failed ones included. */
  results: number;
  dueToStartMs: ReturnType<typeof summarize>;
  endToStoredMs: ReturnType<typeof summarize>;
  /** Runs due in the window, by state (expired, and skipped runs when the service sheds, included). */
  runsByState: Record<string, number>;
  /** CPU per result held, agent and service apart. */
  cpuMsPerResult: { agent: number; service: number };
  agentRssMb: number;
}

interface Window {
  start: string;
  end: string;
}

/**
 * The results of the runs that started in the window (as Prometheus counts the scrapes that started in
 * it), and the runs due in it, from the store (read-only, beside the running service).
 */
function readWindow(
  dbPath: string,
  w: Window,
): Pick<OutpostStep, 'results' | 'held' | 'dueToStartMs' | 'endToStoredMs' | 'runsByState'> {
  const db = new DatabaseSync(dbPath, { readOnly: true });
  try {
    const rows = db
      .prepare(
        `SELECT created_at, json_extract(payload, '$.scheduleLagMs') AS lag, json_extract(payload, '$.stoppedAt') AS stopped,
                json_extract(payload, '$.hasFailures') AS failed
           FROM results WHERE created_at >= ? AND json_extract(payload, '$.startedAt') >= ? AND json_extract(payload, '$.startedAt') < ?`,
      )
      .all(w.start, w.start, w.end) as Array<{ created_at: string; lag: number; stopped: string; failed: number }>;
    const states = db
      .prepare('SELECT state, count(*) AS n FROM runs WHERE due_at >= ? AND due_at < ? GROUP BY state')
      .all(w.start, w.end) as Array<{ state: string; n: number }>;
    return {
      results: rows.length,
      held: rows.filter((r) => r.failed === 0).length,
      dueToStartMs: summarize(rows.map((r) => r.lag)),
      endToStoredMs: summarize(rows.map((r) => Date.parse(r.created_at) - Date.parse(r.stopped))),
      runsByState: Object.fromEntries(states.map((s) => [s.state, s.n])),
    };
  } finally {
    db.close();
  }
}

export interface OutpostFleet {
  /** Adds checks up to `n` in all, then measures a window after `warmup` seconds. */
  step(n: number, o: { window: number; warmup: number }): Promise<OutpostStep>;
  stop(): Promise<void>;
}

/** The service, an account, a location and one agent; checks probe distinct paths of `targetBase`. */
export async function startOutpost(targetBase: string): Promise<OutpostFleet> {
  const cli = `${buildDist()}cli/main.js`;
  // The harness reads OUTPOST_CLI when it is loaded (e2e.ts does the same).
  process.env.OUTPOST_CLI = cli;
  const { Api, createAccount, tempDir } = await import('../../test/e2e/harness.ts');
  const data = await tempDir('bench-prometheus');
  const service = await spawnOutpost(
    cli,
    'serve',
    { ...BENCH_SERVICE_ENV, DATA_DIR: data.dir, PORT: '0', HOST: '127.0.0.1', LOG_LEVEL: 'INFO' },
    [],
    'outpost service listening',
  );
  const processes = [service.child];
  const stop = async () => {
    for (const p of processes.reverse()) await stopProcess(p);
    await data.remove();
  };
  try {
    const url = String(service.line.address);
    const api = new Api(url, await createAccount(data.dir));
    const location = await api.createLocation('bench');
    const agentVars = {
      ...agentEnv(),
      AGENT_HEALTH_PORT: '0',
      AGENT_HEALTH_HOST: '127.0.0.1',
      EXTERNAL_OBSERVABILITY: 'off',
      API_KEY: location.key,
      API_URL: url,
      LOG_LEVEL: 'INFO',
      SPOOL_DIR: `${data.dir}/spool`,
    };
    const agent = await spawnOutpost(cli, 'agent', agentVars, agentNodeFlags(), 'registered; taking work');
    processes.push(agent.child);
    let checks = 0;
    const addChecks = async (n: number) => {
      const bodies = Array.from({ length: n - checks }, (_, j) =>
        checkBody(`${targetBase}/o/${checks + j}`, checks + j),
      );
      await api.createApiChecks(bodies);
      checks = Math.max(checks, n);
    };
    const pids = { agent: agent.child.pid!, service: service.child.pid! };
    return {
      async step(n, o) {
        await addChecks(n);
        await sleep(o.warmup * 1000);
        return measure(n, o.window, `${data.dir}/outpost.db`, pids);
      },
      stop,
    };
  } catch (err) {
    await stop();
    throw err;
  }
}

function checkBody(url: string, i: number): Record<string, unknown> {
  return {
    name: `bench ${i}`,
    frequency: 0,
    frequencyOffset: INTERVAL_SECONDS,
    privateLocations: ['bench'],
    request: {
      method: 'GET',
      url,
      assertions: [{ source: 'STATUS_CODE', comparison: 'EQUALS', property: '', target: '200' }],
    },
  };
}

async function measure(
  n: number,
  window: number,
  dbPath: string,
  pids: { agent: number; service: number },
): Promise<OutpostStep> {
  const cpu0 = { agent: cpuSeconds(pids.agent), service: cpuSeconds(pids.service) };
  const start = new Date().toISOString();
  await sleep(window * 1000);
  const w = { start, end: new Date().toISOString() };
  const cpu = { agent: cpuSeconds(pids.agent) - cpu0.agent, service: cpuSeconds(pids.service) - cpu0.service };
  const agentRssMb = rssMb(pids.agent);
  // Results of runs started in the window may still be on their way: one more second for them, as a
  // run that takes longer than that to be stored is one the service has fallen behind on.
  await sleep(1000);
  const figures = readWindow(dbPath, w);
  const perResult = (s: number) => Math.round((s * 1000 * 1000) / Math.max(figures.held, 1)) / 1000;
  return {
    n,
    expected: (n * window) / INTERVAL_SECONDS,
    lateP99Ms: figures.dueToStartMs.p99,
    ...figures,
    cpuMsPerResult: { agent: perResult(cpu.agent), service: perResult(cpu.service) },
    agentRssMb,
  };
}
