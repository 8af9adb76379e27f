/**
 * Which runtime a check's job needs, the same answer on both sides: the service stores it with the
 * run and leases the run only to agents that carry it; the agent picks the runtime by it.
 */
import { readdir } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { type CheckDefinition, DEFAULT_RUNTIME_ID } from './checks/types.ts';

/** Runtime ids are release names like 2026.04; other folders (suite-engines) are not runtimes. */
export const RUNTIME_ID_PATTERN = /^\d{4}\.\d{2}$/;

/** `<package root>/runtimes`: this file is src/shared/runtimes.ts (or dist/shared/runtimes.js). */
export function packageRuntimesDir(): string {
  return path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..', 'runtimes');
}

/** The names of the runtime folders (or links) under `dir`; none when `dir` is missing. */
export async function runtimeFolderNames(dir: string): Promise<string[]> {
  try {
    const entries = await readdir(dir, { withFileTypes: true });
    return entries
      .filter((e) => (e.isDirectory() || e.isSymbolicLink()) && RUNTIME_ID_PATTERN.test(e.name))
      .map((e) => e.name);
  } catch {
    return [];
  }
}

/** Orders runtime ids newest first, the order the agent advertises and the catalog lists. */
export function newestFirst(a: string, b: string): number {
  return a < b ? 1 : a > b ? -1 : 0;
}

/** Check types whose every run is user code (a browser script, a multistep script, a Playwright suite). */
const USER_CODE_TYPES = new Set(['BROWSER', 'MULTI_STEP', 'PLAYWRIGHT']);

const hasCode = (s: string | null | undefined): boolean => typeof s === 'string' && s.trim() !== '';

/** Whether the check runs user code on the agent (setup or teardown scripts, or a scripted type). */
export function runsUserCode(
  check: Pick<CheckDefinition, 'checkType' | 'localSetupScript' | 'localTearDownScript'>,
): boolean {
  return USER_CODE_TYPES.has(check.checkType) || hasCode(check.localSetupScript) || hasCode(check.localTearDownScript);
}

/**
 * The runtime id the run needs, or null when it runs no user code (any agent may take it). A check
 * with user code but no runtimeId (a job from an older service) gets the default runtime.
 */
export function runtimeNeededBy(
  check: Pick<CheckDefinition, 'checkType' | 'localSetupScript' | 'localTearDownScript' | 'runtimeId'>,
): string | null {
  if (!runsUserCode(check)) return null;
  return check.runtimeId ?? DEFAULT_RUNTIME_ID;
}
