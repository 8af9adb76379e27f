/**
 * The runtimes this agent carries for user code: folders under RUNTIMES_DIR (default
 * `<package root>/runtimes`), each an npm project whose `node` dependency puts a pinned Node.js at
 * `node_modules/.bin/node` next to the libraries scripts may require (`npm run runtimes:install`).
 *
 * A runtime counts only if its Node binary exists and answers `--version`: the agent advertises
 * exactly these when it registers, so the service never sends it a job it cannot start.
 */
import { execFile } from 'node:child_process';
import { realpath, stat } from 'node:fs/promises';
import path from 'node:path';
import { newestFirst, packageRuntimesDir, RUNTIME_ID_PATTERN, runtimeFolderNames } from '../shared/runtimes.ts';

export { RUNTIME_ID_PATTERN };

export interface Runtime {
  id: string;
  /** The runtime's folder, symlinks resolved (the permission model compares real paths). */
  dir: string;
  /** Its Node binary (`<dir>/node_modules/.bin/node`, resolved). */
  nodePath: string;
  /** The folder of that binary, first on the sandbox's PATH. */
  binDir: string;
  /** What `node --version` printed, e.g. v24.21.0. */
  nodeVersion: string;
}

export interface BrokenRuntime {
  id: string;
  dir: string;
  reason: string;
}

export interface RuntimeDiscovery {
  runtimes: Runtime[];
  /** Folders that look like runtimes but cannot run (not installed, broken binary): logged at start. */
  broken: BrokenRuntime[];
}

/** `<package root>/runtimes`, RUNTIMES_DIR's default. */
export const defaultRuntimesDir = packageRuntimesDir;

export function runtimeNodePath(runtimeDir: string): string {
  return path.join(runtimeDir, 'node_modules', '.bin', 'node');
}

/** Orders ids newest first, the order the agent advertises and prefers. */
export function byNewest(a: { id: string }, b: { id: string }): number {
  return newestFirst(a.id, b.id);
}

/**
 * Runs `<nodePath> --version` in a clean environment (the agent's own variables, NODE_OPTIONS
 * included, must not change the answer). node:child_process, not execa as everywhere else: this runs
 * at every start, and loading execa's modules for it would weigh on every idle agent (BENCHMARKS.md,
 * "Agent memory"); execa loads with the first sandbox, for an agent that runs user code.
 */
function askVersion(nodePath: string): Promise<{ version: string } | { reason: string }> {
  return new Promise((resolve) => {
    execFile(
      nodePath,
      ['--version'],
      { env: { PATH: '/usr/bin:/bin' }, timeout: 15_000, encoding: 'utf8' },
      (err, stdout) => {
        const version = stdout.trim();
        if (!err && /^v\d+\.\d+\.\d+/.test(version)) return resolve({ version });
        if (!err) return resolve({ reason: `printed ${JSON.stringify(version.slice(0, 80))}` });
        if (err.killed) return resolve({ reason: 'timed out' });
        resolve({ reason: typeof err.code === 'number' ? `exited with code ${err.code}` : err.message });
      },
    );
  });
}

async function probe(id: string, dir: string): Promise<Runtime | BrokenRuntime> {
  let realDir: string;
  let nodePath: string;
  try {
    realDir = await realpath(dir);
    nodePath = await realpath(runtimeNodePath(realDir));
    if (!(await stat(nodePath)).isFile()) throw new Error('not a file');
  } catch {
    return { id, dir, reason: `no Node binary at ${runtimeNodePath(dir)}; run npm run runtimes:install` };
  }
  const res = await askVersion(nodePath);
  if ('reason' in res) return { id, dir: realDir, reason: `${nodePath} --version ${res.reason}` };
  return { id, dir: realDir, nodePath, binDir: path.dirname(nodePath), nodeVersion: res.version };
}

/** Finds the runtimes under `dir`; a missing `dir` means none (the agent then runs no user code). */
export async function discoverRuntimes(dir: string): Promise<RuntimeDiscovery> {
  const names = await runtimeFolderNames(dir);
  const found = await Promise.all(names.map((n) => probe(n, path.join(dir, n))));
  return {
    runtimes: found.filter((r): r is Runtime => 'nodePath' in r).sort(byNewest),
    broken: found.filter((r): r is BrokenRuntime => 'reason' in r).sort(byNewest),
  };
}
