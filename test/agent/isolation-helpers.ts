/**
 * Helpers for tests of sandbox isolation (docs/sandbox.md, "Signals and users"): a process of the
 * agent's user to aim at, and the live processes of a uid.
 */
import { type ChildProcessWithoutNullStreams, spawn } from 'node:child_process';
import { once } from 'node:events';
import { readdirSync, readFileSync } from 'node:fs';
import { realUid } from '../../src/agent/sandbox/procfs.ts';

/** A process of the agent's user that echoes what it reads: alive() proves it still answers. */
export function startVictim(): { pid: number; alive(): Promise<boolean>; stop(): void } {
  const child: ChildProcessWithoutNullStreams = spawn(process.execPath, ['-e', 'process.stdin.pipe(process.stdout)']);
  const exited = once(child, 'exit').then(() => false);
  return {
    pid: child.pid as number,
    alive: () => {
      child.stdin.write('ping\n');
      return Promise.race([once(child.stdout, 'data').then(() => true), exited]);
    },
    stop: () => child.kill('SIGKILL'),
  };
}

/** Processes of a uid still alive (zombies excluded). */
export function processesOfUid(uid: number): number[] {
  return readdirSync('/proc')
    .filter((n) => /^\d+$/.test(n))
    .map(Number)
    .filter((pid) => {
      if (realUid(pid) !== uid) return false;
      try {
        return !/\) [ZX] /.test(readFileSync(`/proc/${pid}/stat`, 'utf8'));
      } catch {
        return false;
      }
    });
}
