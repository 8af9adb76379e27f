/**
 * Finding and killing everything a sandbox started, from /proc (Linux only, as the agent is).
 *
 * A sandbox is started in its own session and process group, so one signal to the group reaches it
 * and ordinary children. Code that escapes the group (setsid, a double fork re-parented to init)
 * is still found: every process whose parent chain leads to the sandbox, whose working directory is
 * inside the job folder, or whose environment carries the sandbox's marker variable. Only a process
 * that both changed directory out of the job folder and cleared its environment after leaving the
 * group escapes this net; the permission model forbids child processes for scripts in the first
 * place, so this is the second line (docs/sandbox.md). A sandbox under a uid of its own
 * (./isolation.ts) is found whole by that uid.
 */
import { readdirSync, readFileSync, readlinkSync } from 'node:fs';
import { setTimeout as delay } from 'node:timers/promises';

export interface ProcInfo {
  pid: number;
  ppid: number;
  state: string;
}

function readStat(pid: number): ProcInfo | undefined {
  try {
    const text = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // The command name is in parentheses and may itself contain ") ": fields start after the last one.
    const rest = text.slice(text.lastIndexOf(')') + 2).split(' ');
    return { pid, ppid: Number(rest[1]), state: rest[0] ?? '?' };
  } catch {
    return undefined;
  }
}

function listPids(): number[] {
  const out: number[] = [];
  for (const name of readdirSync('/proc')) {
    const pid = Number(name);
    if (Number.isInteger(pid) && pid > 0) out.push(pid);
  }
  return out;
}

/** Resident memory of one process in bytes (0 once it is gone). */
export function rssBytes(pid: number): number {
  try {
    const status = readFileSync(`/proc/${pid}/status`, 'utf8');
    const kb = /VmRSS:\s+(\d+)\s+kB/.exec(status)?.[1];
    return kb ? Number(kb) * 1024 : 0;
  } catch {
    return 0;
  }
}

export interface SandboxMarks {
  /** The sandbox's own pid: its descendants are found by parent chain. */
  rootPid: number | undefined;
  /** The job folder: a process working inside it belongs to the job. */
  jobDir: string;
  /** `KEY=value` in the environment of every process the sandbox starts. */
  envMarker: string;
  /** The sandbox's own uid (docs/sandbox.md): every process of that real uid is the sandbox's. */
  uid?: number;
}

/** The real uid of a process (undefined once it is gone). */
export function realUid(pid: number): number | undefined {
  try {
    const uid = /^Uid:\s+(\d+)/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1];
    return uid === undefined ? undefined : Number(uid);
  } catch {
    return undefined;
  }
}

function belongsByPlace(pid: number, marks: SandboxMarks): boolean {
  // Its own uid is a net nothing escapes: no process can leave its uid without privileges.
  if (marks.uid !== undefined && realUid(pid) === marks.uid) return true;
  try {
    const cwd = readlinkSync(`/proc/${pid}/cwd`);
    if (cwd === marks.jobDir || cwd.startsWith(`${marks.jobDir}/`)) return true;
  } catch {
    // gone, or not ours to read
  }
  try {
    const environ = readFileSync(`/proc/${pid}/environ`, 'latin1');
    return environ.split('\0').includes(marks.envMarker);
  } catch {
    return false;
  }
}

/** Live (non-zombie) processes of the sandbox: its tree plus any process marked by place or environment. */
export function findSandboxProcesses(marks: SandboxMarks, opts: { byPlace?: boolean } = {}): number[] {
  const self = process.pid;
  const infos = listPids()
    .map(readStat)
    .filter((p): p is ProcInfo => p !== undefined && p.state !== 'Z' && p.state !== 'X' && p.pid !== self);
  const found = new Set<number>();
  if (marks.rootPid !== undefined && infos.some((p) => p.pid === marks.rootPid)) found.add(marks.rootPid);
  // Parent chains: repeat until no new child is added (processes are not listed in tree order).
  let grew = found.size > 0;
  while (grew) {
    grew = false;
    for (const p of infos) {
      if (!found.has(p.pid) && found.has(p.ppid)) {
        found.add(p.pid);
        grew = true;
      }
    }
  }
  if (opts.byPlace !== false) {
    for (const p of infos) if (!found.has(p.pid) && belongsByPlace(p.pid, marks)) found.add(p.pid);
  }
  return [...found];
}

/** Summed resident memory of the sandbox's process tree. */
export function treeRssBytes(marks: SandboxMarks): number {
  return findSandboxProcesses(marks, { byPlace: false }).reduce((sum, pid) => sum + rssBytes(pid), 0);
}

function killQuietly(pid: number): void {
  try {
    process.kill(pid, 'SIGKILL');
  } catch {
    // already gone
  }
}

/**
 * SIGKILLs the sandbox's process group and then, round after round, every process found by
 * findSandboxProcesses until a round finds none (a process forking while we kill shows up in the
 * next round). Returns how many processes were signalled in all; `left` is non-empty only if some
 * survived every round.
 */
export async function killSandboxTree(marks: SandboxMarks, rounds = 20): Promise<{ killed: number; left: number[] }> {
  let killed = 0;
  if (marks.rootPid !== undefined) {
    try {
      process.kill(-marks.rootPid, 'SIGKILL');
    } catch {
      // the group is gone already
    }
  }
  let left: number[] = [];
  for (let i = 0; i < rounds; i++) {
    left = findSandboxProcesses(marks);
    if (left.length === 0) break;
    for (const pid of left) killQuietly(pid);
    killed += left.length;
    // Let the kernel reap them before looking again.
    await delay(i < 3 ? 5 : 25);
  }
  return { killed, left };
}
