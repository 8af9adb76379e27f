/**
 * The fleet benchmark: results stored per second and due→start latency (the results' scheduleLagMs)
 * for 1, 2 and 4 agents, on PostgreSQL with two service replicas (agents spread over their URLs) and
 * on SQLite with one, in one run. API checks every 10 s against nginx on loopback; the agents and
 * services run compiled (dist/), as in the images.
 *
 *   npm run bench -- fleet [--checks 500] [--duration 30]
 *
 * `--checks` sets the offered load (checks / 10 per second): raise it until results per second stop
 * following it to find what a number of agents can take. Each step adds agents to the running fleet,
 * lets one interval pass, then counts the results stored during `--duration` seconds.
 * PostgreSQL: a fresh database on OUTPOST_TEST_DATABASE_URL's cluster, or, when that is unset, a
 * throwaway cluster from scripts/postgres-test-cluster.sh, stopped at the end.
 * Progress goes to stderr; the result is one JSON line with one entry per configuration.
 */
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { DatabaseSync } from 'node:sqlite';
import pg from 'pg';
import { ConfigError } from '../../src/shared/errors.ts';
import { createTestDatabase } from '../../test/support/postgres.ts';
import { agentEnv, agentNodeFlags, BENCH_SERVICE_ENV, buildDist, ROOT } from './_dist.ts';
import { startNginx } from './_blackbox.ts';
import { numberFlags, summarize } from './_stats.ts';

type Harness = typeof import('../../test/e2e/harness.ts');
const AGENT_STEPS = [1, 2, 4];
const INTERVAL_MS = 10_000;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const say = (msg: string) => process.stderr.write(`fleet: ${msg}\n`);

/** What one configuration's measured window found in the database. */
interface Window {
  storedAt: string[];
  lagsMs: number[];
}

interface Backend {
  name: 'postgres' | 'sqlite';
  replicas: number;
  /** Service env besides DATA_DIR and PORT. */
  env: Record<string, string>;
  /** Results stored in [from, to): their creation and scheduleLagMs. */
  resultsBetween(from: string, to: string): Promise<Window>;
  close(): Promise<void>;
}

const WINDOW_SQL = 'SELECT created_at, payload FROM results WHERE created_at >= $1 AND created_at < $2';

function windowOf(rows: Array<{ created_at: string; payload: string }>): Window {
  return {
    storedAt: rows.map((r) => r.created_at),
    lagsMs: rows.map((r) => (JSON.parse(r.payload) as { scheduleLagMs: number }).scheduleLagMs),
  };
}

/** A cluster of our own when the environment names none; its stop, or nothing to stop. */
function ensureCluster(): () => void {
  if (process.env.OUTPOST_TEST_DATABASE_URL) return () => {};
  const script = `${ROOT}scripts/postgres-test-cluster.sh`;
  let exports: string;
  try {
    exports = execFileSync(script, ['start'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'] });
  } catch {
    // The script has said why on stderr (no server binaries, initdb failed, ...).
    throw new ConfigError(
      'OUTPOST_TEST_DATABASE_URL',
      `${script} could not start a PostgreSQL cluster (above); install Debian's postgresql (apt-get install -y postgresql) or set OUTPOST_TEST_DATABASE_URL`,
    );
  }
  for (const [, key, value] of exports.matchAll(/^export (\w+)=['"]?([^'"\n]*)['"]?$/gm)) process.env[key!] = value!;
  const dir = process.env.OUTPOST_TEST_POSTGRES_DIR;
  if (!process.env.OUTPOST_TEST_DATABASE_URL || !dir)
    throw new Error(`${script} start printed no OUTPOST_TEST_DATABASE_URL / OUTPOST_TEST_POSTGRES_DIR:\n${exports}`);
  say(`started a throwaway PostgreSQL cluster in ${dir}`);
  return () => execFileSync(script, ['stop', dir], { stdio: ['ignore', 'ignore', 'inherit'] });
}

async function postgresBackend(): Promise<Backend> {
  const database = await createTestDatabase();
  const client = new pg.Client({ connectionString: database.url });
  await client.connect();
  return {
    name: 'postgres',
    replicas: 2,
    env: { DATABASE_URL: database.url, SECRETS_KEY: randomBytes(32).toString('base64') },
    async resultsBetween(from, to) {
      return windowOf((await client.query(WINDOW_SQL, [from, to])).rows);
    },
    async close() {
      await client.end();
      await database.drop();
    },
  };
}

function sqliteBackend(dataDir: string): Backend {
  return {
    name: 'sqlite',
    replicas: 1,
    env: {},
    async resultsBetween(from, to) {
      const db = new DatabaseSync(`${dataDir}/outpost.db`, { readOnly: true });
      try {
        return windowOf(
          db.prepare(WINDOW_SQL.replace('$1', '?').replace('$2', '?')).all(from, to) as Array<{
            created_at: string;
            payload: string;
          }>,
        );
      } finally {
        db.close();
      }
    },
    close: async () => {},
  };
}

interface Fleet {
  h: Harness;
  urls: string[];
  locationKey: string;
  spoolRoot: string;
  procs: Array<{ stop(signal?: NodeJS.Signals): Promise<unknown> }>;
  agents: number;
}

/** The backend's replicas, an account and the location. */
async function startFleet(
  h: Harness,
  backend: Backend,
  dataDirs: string[],
): Promise<{ fleet: Fleet; api: InstanceType<Harness['Api']> }> {
  const fleet: Fleet = { h, urls: [], locationKey: '', spoolRoot: dataDirs[0]!, procs: [], agents: 0 };
  for (let r = 0; r < backend.replicas; r++) {
    const service = await h.startService({
      ...BENCH_SERVICE_ENV,
      ...backend.env,
      DATA_DIR: dataDirs[r]!,
      LOG_LEVEL: 'INFO',
    });
    fleet.procs.push(service.proc);
    fleet.urls.push(service.url);
  }
  const api = new h.Api(fleet.urls[0]!, await h.createAccount(dataDirs[0]!, backend.env));
  fleet.locationKey = (await api.createLocation('fleet')).key;
  return { fleet, api };
}

/** Agents up to `count`, spread over the replicas' URLs, as bin/outpost starts them; resolves once registered. */
async function growTo(fleet: Fleet, count: number): Promise<void> {
  const started: Array<Promise<unknown>> = [];
  for (; fleet.agents < count; fleet.agents++) {
    const env = {
      ...agentEnv(),
      API_KEY: fleet.locationKey,
      API_URL: fleet.urls[fleet.agents % fleet.urls.length]!,
      LOG_LEVEL: 'INFO',
    };
    // API checks without scripts need no sandbox: a pool would only take CPU from the measurement.
    const agent = fleet.h.startAgent(
      { ...env, SPOOL_DIR: `${fleet.spoolRoot}/spool-${fleet.agents}`, SANDBOX_POOL_SIZE: '0' },
      agentNodeFlags(),
    );
    fleet.procs.push(agent);
    started.push(agent.waitForLog((l) => l.msg === 'registered; taking work', 60_000));
  }
  await Promise.all(started);
}

/** One backend: its replicas and the checks, then 1, 2 and 4 agents, one measured window each. */
async function measureBackend(
  h: Harness,
  backend: Backend,
  dataDirs: string[],
  opts: { checks: number; duration: number },
  targetUrl: string,
) {
  const { fleet, api } = await startFleet(h, backend, dataDirs);
  try {
    // The first agent before the checks, so no backlog of first runs waits for it.
    await growTo(fleet, AGENT_STEPS[0]!);
    await api.createApiChecks(
      Array.from({ length: opts.checks }, (_, i) => ({
        name: `fleet ${i}`,
        frequency: 0,
        frequencyOffset: 10,
        privateLocations: ['fleet'],
        request: { method: 'GET', url: `${targetUrl}/${i}` },
      })),
    );
    const out: Array<Record<string, unknown>> = [];
    for (const step of AGENT_STEPS) {
      await growTo(fleet, step);
      // One interval for the new agents to take their share, then the measured window.
      await sleep(INTERVAL_MS);
      const from = new Date().toISOString();
      await sleep(opts.duration * 1000);
      const window = await backend.resultsBetween(from, new Date().toISOString());
      const entry = {
        backend: backend.name,
        replicas: backend.replicas,
        agents: step,
        offeredPerSecond: opts.checks / (INTERVAL_MS / 1000),
        resultsPerSecond: Math.round((window.storedAt.length / opts.duration) * 10) / 10,
        dueToStartMs: summarize(window.lagsMs),
      };
      say(JSON.stringify(entry));
      out.push(entry);
    }
    return out;
  } finally {
    for (const p of fleet.procs.reverse()) await p.stop();
  }
}

export async function run(args: string[]): Promise<Record<string, unknown>> {
  const opts = numberFlags(args, { checks: 500, duration: 30 });
  process.env.OUTPOST_CLI = `${buildDist()}cli/main.js`;
  const h: Harness = await import('../../test/e2e/harness.ts');
  const stopCluster = ensureCluster();
  const nginx = await startNginx({
    location: () => 'location / { default_type application/json; return 200 \'{"ok":true}\'; }',
  });
  const dirs = await Promise.all(['pg-a', 'pg-b', 'sqlite'].map((p) => h.tempDir(`bench-fleet-${p}`)));
  const results: Array<Record<string, unknown>> = [];
  try {
    const targetUrl = `http://127.0.0.1:${nginx.port}`;
    const backends: Array<[() => Promise<Backend>, string[]]> = [
      [postgresBackend, [dirs[0]!.dir, dirs[1]!.dir]],
      [async () => sqliteBackend(dirs[2]!.dir), [dirs[2]!.dir]],
    ];
    for (const [open, dataDirs] of backends) {
      const backend = await open();
      try {
        results.push(...(await measureBackend(h, backend, dataDirs, opts, targetUrl)));
      } finally {
        await backend.close();
      }
    }
  } finally {
    await nginx.stop();
    for (const d of dirs) await d.remove();
    stopCluster();
  }
  return {
    checks: opts.checks,
    intervalSeconds: INTERVAL_MS / 1000,
    windowSeconds: opts.duration,
    cpus: (await import('node:os')).availableParallelism(),
    runs: results,
  };
}
