/**
 * The compiled agent (dist/) for the benchmarks that measure the agent's memory: the Docker image
 * runs dist/, and running the TypeScript sources instead adds Node's type-stripping compiler (about
 * 20–30 MB of RSS that production never pays) to every figure.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

export const ROOT = fileURLToPath(new URL('../..', import.meta.url));

/**
 * Runs what `npm run build` runs (`tsc -p tsconfig.build.json`, then scripts/copy-assets.ts) and
 * returns dist/'s path. tsc emits even when the tree has type errors (noEmitOnError is off); those are reported on stderr and the benchmark goes on with what was
 * emitted, because several people edit the tree at once and an unrelated error must not stop a
 * measurement. No emitted CLI at all is an error. OUTPOST_BENCH_NO_BUILD=1 reuses an existing dist/.
 */
export function buildDist(): string {
  // Repeated runs of an unchanged tree (medians of three) may skip the build.
  if (process.env.OUTPOST_BENCH_NO_BUILD === '1' && existsSync(`${ROOT}dist/cli/main.js`)) return `${ROOT}dist/`;
  const r = spawnSync(
    process.execPath,
    [`${ROOT}node_modules/typescript/bin/tsc`, '-p', `${ROOT}tsconfig.build.json`],
    { encoding: 'utf8' },
  );
  const dist = `${ROOT}dist/`;
  if (!existsSync(`${dist}cli/main.js`)) throw new Error(`tsc did not emit dist/cli/main.js:\n${r.stdout}${r.stderr}`);
  // npm run build's second step: the files tsc does not emit (the web assets the service reads at
  // start, the sandbox's bootstrap). Its progress line is captured: stdout carries only the result.
  const copy = spawnSync(process.execPath, [`${ROOT}scripts/copy-assets.ts`], { encoding: 'utf8' });
  if (copy.status !== 0) throw new Error(`scripts/copy-assets.ts failed:\n${copy.stdout}${copy.stderr}`);
  if (r.status !== 0) {
    const errors = `${r.stdout}${r.stderr}`.split('\n').filter((l) => / error TS\d+/.test(l));
    process.stderr.write(
      `bench: tsc reported ${errors.length} type error(s); measuring the emitted dist/ anyway:\n  ${errors.slice(0, 5).join('\n  ')}\n`,
    );
  }
  return dist;
}

/**
 * The Node flags the agent runs with: bin/agent-node-flags, which bin/outpost and the Docker image
 * read too. OUTPOST_BENCH_NODE_FLAGS (space-separated, may be empty) overrides it to try others.
 */
export function agentNodeFlags(): string[] {
  const text = process.env.OUTPOST_BENCH_NODE_FLAGS ?? readFileSync(`${ROOT}bin/agent-node-flags`, 'utf8');
  return text.split(/\s+/).filter((f) => f !== '');
}

/** OUTPOST_BENCH_SERVICE_FLAGS: Node flags for the service (a CPU profile, say), none by default. */
export function serviceNodeFlags(): string[] {
  return (process.env.OUTPOST_BENCH_SERVICE_FLAGS ?? '').split(/\s+/).filter((f) => f !== '');
}

/** The pairs in bin/agent-env (the agent's malloc settings), in file order. */
export function readAgentEnvFile(): Array<[string, string]> {
  return readFileSync(`${ROOT}bin/agent-env`, 'utf8')
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => line !== '' && !line.startsWith('#'))
    .map((line) => {
      const eq = line.indexOf('=');
      return [line.slice(0, eq), line.slice(eq + 1)];
    });
}

/**
 * The environment the agent gets on top of its own, as bin/outpost gives it: bin/agent-env's pairs,
 * each unless this process's environment sets it (so `MALLOC_ARENA_MAX=8 npm run bench -- e2e` tries another).
 */
export function agentEnv(): Record<string, string> {
  return Object.fromEntries(readAgentEnvFile().map(([key, value]) => [key, process.env[key] ?? value]));
}

/**
 * The public API's rate limits off for a benchmark's service: a benchmark creates thousands of checks
 * through the API in its set-up, which is not what those limits are for (README, RATE_LIMIT_*).
 */
export const BENCH_SERVICE_ENV = { RATE_LIMIT_API_PER_KEY: '0', RATE_LIMIT_API_PER_ADDRESS: '0' } as const;
