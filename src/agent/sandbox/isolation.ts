/**
 * Keeping user code from signalling anything outside its own sandbox (docs/sandbox.md, "Signals
 * and users"). Node's permission model does not cover process.kill, and a guard in JavaScript can be
 * walked around (process._kill, a native binding), so the kernel's own rule is used: a process may
 * signal another only when its real or effective uid matches the target's real or saved uid. Each
 * sandbox therefore runs under a uid of its own, taken from a range nobody else uses, started through
 * util-linux's setpriv with no supplementary groups, no capabilities, an empty bounding set and
 * no_new_privs (so no setuid or file-capability program can give it back any privilege).
 *
 * Switching uid needs CAP_SETUID and CAP_SETGID; giving the job folder to that uid, signalling its
 * processes and removing what it wrote (even files it made unreadable) need CAP_CHOWN, CAP_KILL and
 * CAP_DAC_OVERRIDE. An agent started as root (the standard image with `--user 0`) holds all of them.
 */
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { chown, lchown, lstat, readdir, rm } from 'node:fs/promises';
import path from 'node:path';
import { type Env, readEnum, readInteger } from '../../shared/env.ts';
import { ConfigError } from '../../shared/errors.ts';
import { findSandboxProcesses, type SandboxMarks } from './procfs.ts';
import { isExecutable } from '../../shared/executable.ts';

export const SANDBOX_ISOLATION_MODES = ['auto', 'uid', 'none'] as const;
export type SandboxIsolationMode = (typeof SANDBOX_ISOLATION_MODES)[number];

/** How many uids (and gids of the same number) sandboxes use from SANDBOX_UID_BASE on. */
export const SANDBOX_UID_COUNT = 1024;

/** util-linux's setpriv: Debian installs it everywhere (util-linux is an essential package). */
export const DEFAULT_LAUNCHER = '/usr/bin/setpriv';

export interface IsolationSettings {
  mode: SandboxIsolationMode;
  uidBase: number;
}

/** SANDBOX_ISOLATION and SANDBOX_UID_BASE; a bad value is a ConfigError naming the variable. */
export function loadIsolationSettings(env: Env): IsolationSettings {
  return {
    mode: readEnum(env, 'SANDBOX_ISOLATION', 'auto', SANDBOX_ISOLATION_MODES),
    uidBase: readInteger(env, 'SANDBOX_UID_BASE', 61_000, { min: 1000, max: 2 ** 31 - SANDBOX_UID_COUNT - 1 }),
  };
}

/**
 * Hands out one uid per live sandbox, so two sandboxes (of one job or of two) cannot signal each
 * other either. A uid comes back only once none of its processes is left (the caller checks).
 */
export class UidAllocator {
  readonly base: number;
  readonly count: number;
  readonly #free: number[];

  constructor(base: number, count = SANDBOX_UID_COUNT) {
    this.base = base;
    this.count = count;
    this.#free = Array.from({ length: count }, (_, i) => base + i);
  }

  /** A free uid, or undefined when all are taken. */
  take(): number | undefined {
    return this.#free.shift();
  }

  release(uid: number): void {
    if (uid >= this.base && uid < this.base + this.count && !this.#free.includes(uid)) this.#free.push(uid);
  }
}

export type SandboxIsolation = { kind: 'uid'; launcher: string; uids: UidAllocator } | { kind: 'none'; reason: string };

/** No isolation: sandboxes run as the agent's own user (tests, SANDBOX_ISOLATION=none). */
export const NO_ISOLATION: SandboxIsolation = { kind: 'none', reason: 'not configured' };

/** The launcher's arguments that run `file args` as `uid` (and the gid of the same number). */
export function launchArgs(uid: number, file: string, args: readonly string[]): string[] {
  return [
    `--reuid=${uid}`,
    `--regid=${uid}`,
    '--clear-groups',
    '--inh-caps=-all',
    '--bounding-set=-all',
    '--no-new-privs',
    '--',
    file,
    ...args,
  ];
}

const NEEDED_CAPS: Array<[string, number]> = [
  ['CAP_CHOWN', 0],
  ['CAP_DAC_OVERRIDE', 1],
  ['CAP_KILL', 5],
  ['CAP_SETGID', 6],
  ['CAP_SETUID', 7],
];

/** The capabilities of NEEDED_CAPS this process lacks (from /proc/self/status). */
export function missingCapabilities(status = readFileSync('/proc/self/status', 'utf8')): string[] {
  const hex = /^CapEff:\s*([0-9a-f]+)$/m.exec(status)?.[1] ?? '0';
  const eff = BigInt(`0x${hex}`);
  return NEEDED_CAPS.filter(([, bit]) => (eff & (1n << BigInt(bit))) === 0n).map(([name]) => name);
}

/**
 * Runs the launcher once as the first sandbox uid with a shell that tries to signal this process:
 * it proves the uid switch works here (a user namespace without that uid, seccomp, no_new_privs
 * without the capabilities all fail it) and that the kernel refuses the signal.
 */
function probe(launcher: string, uid: number): Promise<string | undefined> {
  const script = 'kill -0 "$1" 2>/dev/null && { echo "the sandbox uid could signal the agent"; exit 3; }; exit 0';
  return new Promise((resolve) => {
    // An environment of its own: the agent's (API_KEY among it) is nothing a sandbox uid should hold.
    const options = { timeout: 10_000, cwd: '/', env: { PATH: '/usr/bin:/bin' } };
    execFile(
      launcher,
      launchArgs(uid, '/bin/sh', ['-c', script, 'sh', String(process.pid)]),
      options,
      (err, stdout, stderr) => {
        if (!err) resolve(undefined);
        else
          resolve(
            `a process under the sandbox uid ${uid} (${launcher}) failed the start-up check: ${(stdout + stderr).trim().split('\n').pop() || `exit code ${err.code}`}`,
          );
      },
    );
  });
}

function unavailableReason(launcher: string): string | undefined {
  const missing = missingCapabilities();
  if (missing.length > 0) {
    return `the agent (uid ${process.getuid?.()}) lacks ${missing.join(', ')}; start it as root with those capabilities (docker run --user 0; docs/deploy.md, "Users and capabilities")`;
  }
  return isExecutable(launcher) ? undefined : `${launcher} (util-linux's setpriv) is missing`;
}

/**
 * Users and groups of the machine whose ids fall in the sandbox range (`name:x:id:...` lines). A
 * sandbox must not run as someone's uid: it could signal their processes, and the kill after a job
 * takes every process of the uid.
 */
export function accountsInRange(
  base: number,
  count: number,
  files: readonly string[] = ['/etc/passwd', '/etc/group'],
): string[] {
  const found: string[] = [];
  for (const file of files) {
    let text = '';
    try {
      text = readFileSync(file, 'utf8');
    } catch {
      continue;
    }
    for (const line of text.split('\n')) {
      const [name, , id] = line.split(':');
      if (name && id && Number(id) >= base && Number(id) < base + count) found.push(`${name} (${id}, ${file})`);
    }
  }
  return found;
}

/**
 * The best isolation this machine allows under the setting: `uid` or `auto` use a uid per sandbox
 * when it works; `uid` without it is a ConfigError (exit 2); `auto` then runs sandboxes as the
 * agent's user and says so (the caller logs `reason`); `none` is the explicit opt-out. A range
 * that holds a user or group of the machine is a ConfigError naming SANDBOX_UID_BASE.
 */
export async function detectIsolation(
  settings: IsolationSettings,
  launcher = DEFAULT_LAUNCHER,
  accountFiles?: readonly string[],
): Promise<SandboxIsolation> {
  if (settings.mode === 'none') return { kind: 'none', reason: 'SANDBOX_ISOLATION=none' };
  let why = unavailableReason(launcher);
  if (why === undefined) {
    const taken = accountsInRange(settings.uidBase, SANDBOX_UID_COUNT, accountFiles);
    if (taken.length > 0) {
      const range = `${settings.uidBase}-${settings.uidBase + SANDBOX_UID_COUNT - 1}`;
      throw new ConfigError(
        'SANDBOX_UID_BASE',
        `SANDBOX_UID_BASE=${settings.uidBase}: the sandbox uids ${range} must be no one's, but ${taken.slice(0, 3).join(', ')} use them; choose a free range`,
      );
    }
    why = await probe(launcher, settings.uidBase);
  }
  if (why === undefined) return { kind: 'uid', launcher, uids: new UidAllocator(settings.uidBase) };
  if (settings.mode === 'uid') {
    throw new ConfigError(
      'SANDBOX_ISOLATION',
      `SANDBOX_ISOLATION=uid cannot be met: ${why}; or set SANDBOX_ISOLATION=auto or none to run user code as the agent's user`,
    );
  }
  return { kind: 'none', reason: why };
}

/**
 * Gives `dir` and everything in it (links themselves, never their targets) to the sandbox's uid,
 * so files the agent put there before the run (browser checks' config and script) are the
 * sandbox's to use.
 */
export async function giveToUid(dir: string, uid: number): Promise<void> {
  await chown(dir, uid, uid);
  for (const entry of await readdir(dir, { withFileTypes: true, recursive: true })) {
    await lchown(path.join(entry.parentPath, entry.name), uid, uid);
  }
}

/** The world-writable folders a sandbox without the permission model can leave files in. */
export const SHARED_TEMP_DIRS = ['/tmp', '/var/tmp', '/dev/shm'];

/**
 * Removes what `uid` left in the shared temporary folders, so the next sandbox given the same uid
 * finds nothing of an earlier job's (a sandbox can only create top-level entries there; what is
 * inside them is its own).
 */
export async function removeFilesOfUid(uid: number, dirs: readonly string[] = SHARED_TEMP_DIRS): Promise<void> {
  for (const dir of dirs) {
    let names: string[];
    try {
      names = await readdir(dir);
    } catch {
      continue;
    }
    for (const name of names) {
      const entry = path.join(dir, name);
      try {
        if ((await lstat(entry)).uid === uid) await rm(entry, { recursive: true, force: true });
      } catch {
        // gone meanwhile
      }
    }
  }
}

/**
 * Gives a sandbox's uid back to the pool, only when no process of it is left (one that outlived its
 * job keeps the uid taken, so no later job shares a uid with it), after removing what it left in the
 * shared temporary folders (`removeTemp`: code under Node's permission model could not write there).
 * False when the uid stays taken.
 */
export async function releaseSandboxUid(
  isolation: SandboxIsolation,
  marks: SandboxMarks & { uid: number },
  removeTemp = true,
): Promise<boolean> {
  if (isolation.kind !== 'uid') return true;
  if (findSandboxProcesses(marks).length > 0) return false;
  if (removeTemp) await removeFilesOfUid(marks.uid);
  isolation.uids.release(marks.uid);
  return true;
}
