/**
 * The engines and package managers of Playwright check suites, all from the npm project in
 * SUITE_ENGINES_DIR (runtimes/suite-engines, installed by `npm run runtimes:install`): Node.js 22,
 * 24 and 26 (the npm `node` package under the aliases node22/node24/node26), Bun 1.3 (the npm
 * `bun` package, whose optional dependency carries the binary), npm, pnpm and Yarn classic. Nothing
 * is fetched at run time: a missing engine is an error result that says how to install it.
 */
import { access, constants } from 'node:fs/promises';
import path from 'node:path';
import { SUITE_ENGINES, type SuiteEngine } from '../../shared/checks/types.ts';
import type { Lockfile } from '../../shared/suite-archive.ts';

export interface ResolvedEngine {
  engine: SuiteEngine;
  /** The binary that runs the tests: a Node or the Bun executable. */
  bin: string;
  kind: 'node' | 'bun';
  /** The Node that runs npm, pnpm and Yarn (the engine itself, or Node 24 beside Bun). */
  node: string;
}

/** The engine is not installed on this agent; the message says how to fix it. */
export class EngineUnavailableError extends Error {
  override readonly name = 'EngineUnavailableError';
}

const nodeOf = (enginesDir: string, major: string) =>
  path.join(enginesDir, 'node_modules', `node${major}`, 'bin', 'node');

async function executable(p: string): Promise<boolean> {
  try {
    await access(p, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

export function enginePaths(
  enginesDir: string,
  engine: SuiteEngine,
): { bin: string; node: string; kind: 'node' | 'bun' } {
  if (engine === 'bun1.3') {
    return {
      bin: path.join(enginesDir, 'node_modules', 'bun', 'bin', 'bun.exe'),
      node: nodeOf(enginesDir, '24'),
      kind: 'bun',
    };
  }
  const major = engine.slice('node'.length);
  return { bin: nodeOf(enginesDir, major), node: nodeOf(enginesDir, major), kind: 'node' };
}

export async function resolveEngine(enginesDir: string, engine: SuiteEngine): Promise<ResolvedEngine> {
  const p = enginePaths(enginesDir, engine);
  for (const file of new Set([p.bin, p.node])) {
    if (!(await executable(file))) {
      throw new EngineUnavailableError(
        `the suite engine ${engine} is not installed on this agent (${file} is missing); run npm run runtimes:install (SUITE_ENGINES_DIR=${enginesDir})`,
      );
    }
  }
  return { engine, ...p };
}

/** Engines whose binaries are present, for the agent's start-up log. */
export async function installedEngines(enginesDir: string): Promise<SuiteEngine[]> {
  const found: SuiteEngine[] = [];
  for (const e of SUITE_ENGINES) {
    const p = enginePaths(enginesDir, e);
    if ((await executable(p.bin)) && (await executable(p.node))) found.push(e);
  }
  return found;
}

export type PackageManager = 'npm' | 'pnpm' | 'yarn' | 'bun';

export function packageManagerOf(lockfile: Lockfile): PackageManager {
  switch (lockfile) {
    case 'package-lock.json':
      return 'npm';
    case 'pnpm-lock.yaml':
      return 'pnpm';
    case 'yarn.lock':
      return 'yarn';
    default:
      return 'bun';
  }
}

/**
 * The command that installs exactly what the lockfile says (never updating it): npm ci,
 * pnpm install --frozen-lockfile, yarn install --frozen-lockfile, bun install --frozen-lockfile.
 * `extraArgs` come from the check's installCommand (its arguments after the package manager).
 */
export function installCommand(
  enginesDir: string,
  engine: ResolvedEngine,
  pm: PackageManager,
  extraArgs: readonly string[] | null | undefined,
): { file: string; args: string[] } {
  const mod = (...p: string[]) => path.join(enginesDir, 'node_modules', ...p);
  const quiet = ['--no-audit', '--no-fund'];
  switch (pm) {
    case 'npm':
      return { file: engine.node, args: [mod('npm', 'bin', 'npm-cli.js'), ...(extraArgs ?? ['ci', ...quiet])] };
    case 'pnpm':
      return {
        file: engine.node,
        args: [mod('pnpm', 'bin', 'pnpm.cjs'), ...(extraArgs ?? ['install', '--frozen-lockfile'])],
      };
    case 'yarn':
      return {
        file: engine.node,
        args: [mod('yarn', 'bin', 'yarn.js'), ...(extraArgs ?? ['install', '--frozen-lockfile', '--non-interactive'])],
      };
    case 'bun': {
      const bun = mod('bun', 'bin', 'bun.exe');
      return { file: bun, args: [...(extraArgs ?? ['install', '--frozen-lockfile'])] };
    }
  }
}

/** Folders put first on PATH: the engine's, then the package managers' shims (npx, pnpm, yarn, bun). */
export function enginePath(enginesDir: string, engine: ResolvedEngine): string {
  const dirs = [
    path.dirname(engine.bin),
    path.dirname(engine.node),
    path.join(enginesDir, 'node_modules', 'bun', 'bin'),
    path.join(enginesDir, 'node_modules', '.bin'),
  ];
  return [...new Set(dirs), '/usr/local/bin', '/usr/bin', '/bin'].join(':');
}
