/**
 * Start-up check of SPOOL_DIR: the agent must be able to write results there before it takes work,
 * and an operator who got the path wrong must hear which variable and what is wrong, at once (exit 2),
 * rather than a bare errno later or a hang.
 */
import { randomBytes } from 'node:crypto';
import { mkdir, realpath, stat, unlink } from 'node:fs/promises';
import path from 'node:path';
import { ConfigError } from '../shared/errors.ts';
import { writeFileSynced } from './spool-ledger.ts';

/**
 * Kernel file systems: nothing there can hold a result, and some calls never return on them
 * (Node's recursive mkdir loops for good under /proc), so they are refused before any is made.
 */
const KERNEL_FS_ROOTS = ['/proc', '/sys', '/dev'];

/** How long the directory may take to answer: a hung network mount must not hang the start, but a synced write on a busy disk may take seconds. */
export const SPOOL_DIR_PROBE_TIMEOUT_MS = 5_000;

class SpoolDirProblem extends Error {}

/** Creates SPOOL_DIR if needed and proves it takes a synced write; throws ConfigError('SPOOL_DIR') if not. */
export async function prepareSpoolDir(dir: string, timeoutMs = SPOOL_DIR_PROBE_TIMEOUT_MS): Promise<void> {
  const fail = (reason: string) =>
    new ConfigError(
      'SPOOL_DIR',
      `SPOOL_DIR=${JSON.stringify(dir)} cannot be used: ${reason}; point it at a writable directory on a disk`,
    );
  try {
    refuseKernelFs(dir);
    refuseKernelFs(await realpathOfExisting(dir));
    await withTimeout(createAndProbe(dir), timeoutMs);
  } catch (err) {
    if (err instanceof SpoolDirProblem) throw fail(err.message);
    throw fail(await describeFsError(dir, err as NodeJS.ErrnoException));
  }
}

function refuseKernelFs(p: string): void {
  const root = KERNEL_FS_ROOTS.find((r) => p === r || p.startsWith(`${r}/`));
  if (root) throw new SpoolDirProblem(`it is under ${root}, a kernel file system that cannot hold files`);
}

/** The real path of `dir`, resolving symbolic links in the part of it that exists already. */
async function realpathOfExisting(dir: string): Promise<string> {
  const rest: string[] = [];
  let p = path.resolve(dir);
  for (;;) {
    try {
      return path.join(await realpath(p), ...rest.reverse());
    } catch {
      const parent = path.dirname(p);
      if (parent === p) return path.resolve(dir);
      rest.push(path.basename(p));
      p = parent;
    }
  }
}

async function createAndProbe(dir: string): Promise<void> {
  await makeDirectories(dir);
  if (!(await stat(dir)).isDirectory()) throw new SpoolDirProblem(`${dir} is a file, not a directory`);
  const probe = path.join(dir, `.probe-${randomBytes(4).toString('hex')}.tmp`);
  try {
    await writeFileSynced(probe, 'probe', 'wx');
  } finally {
    await unlink(probe).catch(() => {});
  }
}

/**
 * mkdir -p, one level at a time: Node's recursive mkdir reports a read-only file system as ENOENT
 * (and loops under /proc), which would hide the real reason from the operator.
 */
async function makeDirectories(dir: string): Promise<void> {
  const missing: string[] = [];
  for (let p = path.resolve(dir); ; p = path.dirname(p)) {
    const exists = await stat(p).then(
      () => true,
      (err: NodeJS.ErrnoException) => (err.code === 'ENOENT' ? false : Promise.reject(err)),
    );
    if (exists || path.dirname(p) === p) break;
    missing.unshift(p);
  }
  for (const p of missing) await mkdir(p);
}

function withTimeout<T>(work: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_resolve, reject) => {
    timer = setTimeout(
      () => reject(new SpoolDirProblem(`it did not answer within ${ms} ms (a hung network mount?)`)),
      ms,
    );
  });
  return Promise.race([work, timeout]).finally(() => clearTimeout(timer));
}

/** The errno of a failed create or write, in words, naming the path component at fault where there is one. */
async function describeFsError(dir: string, err: NodeJS.ErrnoException): Promise<string> {
  switch (err.code) {
    case 'EROFS':
      return 'it is on a read-only file system';
    case 'EACCES':
    case 'EPERM':
      return `permission denied (${err.syscall ?? 'access'} ${err.path ?? dir})`;
    case 'ENOTDIR':
    case 'EEXIST': {
      const file = await firstNonDirectory(dir);
      return file ? `${file} is a file, not a directory` : `${err.code} ${err.message}`;
    }
    case 'ENOSPC':
    case 'EDQUOT':
      return 'its file system is full';
    default:
      return `${err.code ?? 'error'} ${err.message}`;
  }
}

/** The first path component of `dir` that exists and is not a directory, if any. */
async function firstNonDirectory(dir: string): Promise<string | undefined> {
  const parts = path.resolve(dir).split(path.sep).filter(Boolean);
  let p: string = path.sep;
  for (const part of parts) {
    p = path.join(p, part);
    const st = await stat(p).catch(() => undefined);
    if (!st) return undefined;
    if (!st.isDirectory()) return p;
  }
  return undefined;
}
