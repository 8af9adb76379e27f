/**
 * A suite run under a uid of its own (docs/suites.md, "Isolation"; docs/sandbox.md, "Signals and
 * users"): the install (the project's lifecycle scripts) and `playwright test` are user code, so they
 * run under a sandbox uid from the same allocator and launcher as the other sandboxes, and cannot
 * signal the agent, another process of its user or another job.
 *
 * The job folder itself stays the agent's (mode 0711): the sandbox owns only what is inside its
 * sub-folders, so it cannot swap one of them for a link. What the agent reads or writes in them after
 * user code ran goes through `insideJob`, which resolves links first: the agent (root) must not be
 * tricked into reading or writing a file elsewhere on its behalf.
 */
import { chmod, lstat, mkdir, realpath } from 'node:fs/promises';
import path from 'node:path';
import { giveToUid, releaseSandboxUid, type SandboxIsolation } from '../sandbox/isolation.ts';
import type { SandboxMarks } from '../sandbox/procfs.ts';

export interface SuiteUid {
  uid: number;
  launcher: string;
}

/** All sandbox uids are taken: the agent's own limit, not the suite's fault. */
export class SuiteUidUnavailableError extends Error {
  override readonly name = 'SuiteUidUnavailableError';
}

/** The run's own uid, or undefined when sandboxes run as the agent's user (SANDBOX_ISOLATION). */
export function takeSuiteUid(isolation: SandboxIsolation): SuiteUid | undefined {
  if (isolation.kind !== 'uid') return undefined;
  const uid = isolation.uids.take();
  if (uid === undefined)
    throw new SuiteUidUnavailableError(
      `all ${isolation.uids.count} sandbox uids from ${isolation.uids.base} are in use`,
    );
  return { uid, launcher: isolation.launcher };
}

/**
 * Hands the sandbox's sub-folders (and what the agent put there: the project, restored
 * dependencies) to its uid. Only while no process of the uid runs: a live one could swap a folder for
 * a link between the listing and the chown.
 */
export async function handOver(dirs: readonly string[], who: SuiteUid | undefined): Promise<void> {
  if (!who) return;
  for (const dir of dirs) await giveToUid(dir, who.uid);
}

/**
 * Once the run's processes are killed: removes what its uid left in the shared temporary folders and
 * returns the uid to the pool, only when no process of it is left (else it stays taken).
 */
export async function releaseSuiteUid(
  isolation: SandboxIsolation,
  who: SuiteUid | undefined,
  marks: SandboxMarks,
): Promise<boolean> {
  return who ? releaseSandboxUid(isolation, { ...marks, uid: who.uid }) : true;
}

/** `p` with links resolved, when it exists and lies inside `jobDir`; else undefined. */
export async function insideJob(jobDir: string, p: string): Promise<string | undefined> {
  try {
    const real = await realpath(p);
    return real.startsWith(`${jobDir}${path.sep}`) ? real : undefined;
  } catch {
    return undefined;
  }
}

/** A shared folder is not the agent's alone: runs of other checks could be given what a sandbox put there. */
export class SharedFolderError extends Error {
  override readonly name = 'SharedFolderError';
}

/**
 * Makes `dir` (as the agent, `mode`) or checks the existing one is a real folder of the agent's that
 * no one else may write to. Under a world-writable parent such as /tmp a sandbox could have made it
 * first and so poisoned what later runs of other checks use.
 */
export async function agentFolder(dir: string, variable: string, mode: number): Promise<void> {
  await mkdir(dir, { recursive: true, mode });
  const st = await lstat(dir);
  const me = process.getuid?.() ?? st.uid;
  if (!st.isDirectory() || st.uid !== me || (st.mode & 0o022) !== 0) {
    throw new SharedFolderError(
      `${variable}: ${dir} must be a folder of the agent's user (uid ${me}) that no one else may write to, but it is ${st.isDirectory() ? `owned by uid ${st.uid} with mode ${(st.mode & 0o777).toString(8)}` : 'not a folder'}; remove it or choose another path`,
    );
  }
  await chmod(dir, mode);
}

/** The job folder: the agent's, passable (0711) for the run's uid; its sub-folders 0700, given to it later. */
export async function makeJobFolder(
  jobDir: string,
  subdirs: readonly string[],
  who: SuiteUid | undefined,
): Promise<void> {
  await mkdir(jobDir, { mode: who ? 0o711 : 0o700 });
  for (const d of subdirs) await mkdir(d, { mode: 0o700 });
}
