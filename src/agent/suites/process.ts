/**
 * One process of a suite run (the install, then the tests): a child started with execa in its own
 * process group and session, an environment built from nothing (extendEnv: false), its output into
 * the run's SuiteLog. Stopping it is staged so Playwright can write its report: SIGINT to the group
 * (Playwright marks running tests `interrupted` and the reporters flush), after `graceMs` SIGTERM,
 * a second later SIGKILL to everything the job started, including processes that left the group
 * (found by job folder and marker variable, ../sandbox/procfs.ts, and by the run's own uid when it
 * has one: then every process of that uid).
 */
import { setTimeout as delay } from 'node:timers/promises';
import { execa } from 'execa';
import { launchArgs } from '../sandbox/isolation.ts';
import { killSandboxTree, type SandboxMarks } from '../sandbox/procfs.ts';
import type { SuiteLog, SuitePhase } from './log.ts';

export interface SuiteProcessOptions {
  file: string;
  args: string[];
  cwd: string;
  env: Record<string, string>;
  log: SuiteLog;
  phase: SuitePhase;
  /** The run's signal: cancelled, the daemon's limit, or shutdown. */
  signal: AbortSignal;
  /** The suite's own deadline (epoch ms): past it the process is stopped like a cancel. */
  deadline: number;
  graceMs: number;
  /** The job folder and marker, to find what the process started. */
  jobDir: string;
  marker: string;
  /** The run's own uid and the launcher that switches to it (./suite-uid.ts); absent: the agent's user. */
  runAs?: { uid: number; launcher: string } | undefined;
}

export interface SuiteProcessExit {
  exitCode: number | null;
  signal: string | null;
  /** Why the agent stopped it, if it did. */
  stoppedBy: 'abort' | 'deadline' | undefined;
  /** The process could not be started at all (the engine binary is missing, ...). */
  spawnError: string | undefined;
}

export async function runSuiteProcess(o: SuiteProcessOptions): Promise<SuiteProcessExit> {
  const [file, args] = o.runAs ? [o.runAs.launcher, launchArgs(o.runAs.uid, o.file, o.args)] : [o.file, o.args];
  const sub = execa(file, args, {
    cwd: o.cwd,
    env: o.env,
    extendEnv: false,
    detached: true,
    buffer: false,
    reject: false,
    stdin: 'ignore',
    stdout: 'pipe',
    stderr: 'pipe',
  });
  const out = o.log.sink(o.phase, 'stdout');
  const err = o.log.sink(o.phase, 'stderr');
  sub.stdout?.on('data', (c: Buffer) => out.write(c));
  sub.stderr?.on('data', (c: Buffer) => err.write(c));
  sub.stdout?.on('error', () => {});
  sub.stderr?.on('error', () => {});

  const marks: SandboxMarks = {
    rootPid: sub.pid,
    jobDir: o.jobDir,
    envMarker: o.marker,
    ...(o.runAs ? { uid: o.runAs.uid } : {}),
  };
  let exited = false;
  let stoppedBy: SuiteProcessExit['stoppedBy'];
  const done = sub.then((r) => {
    exited = true;
    return r;
  });

  const signalGroup = (sig: NodeJS.Signals): void => {
    if (sub.pid === undefined || exited) return;
    try {
      process.kill(-sub.pid, sig);
    } catch {
      // the group is gone
    }
  };
  const stop = async (why: 'abort' | 'deadline'): Promise<void> => {
    if (stoppedBy || exited) return;
    stoppedBy = why;
    o.log.note(
      `stopping the ${o.phase === 'install' ? 'install' : 'tests'}: ${why === 'abort' ? 'the run was stopped' : 'the global timeout was reached'} (SIGINT)`,
    );
    signalGroup('SIGINT');
    const waited = await Promise.race([done.then(() => true), delay(o.graceMs).then(() => false)]);
    if (waited) return;
    signalGroup('SIGTERM');
    const waitedTerm = await Promise.race([done.then(() => true), delay(1_000).then(() => false)]);
    if (!waitedTerm) o.log.note('the process did not stop on SIGINT and SIGTERM: killed (SIGKILL)');
    await killSandboxTree(marks);
  };

  const onAbort = (): void => void stop('abort');
  if (o.signal.aborted) onAbort();
  else o.signal.addEventListener('abort', onAbort, { once: true });
  const untilDeadline = Math.max(0, o.deadline - Date.now());
  const timer = setTimeout(() => void stop('deadline'), untilDeadline);

  const res = await done;
  clearTimeout(timer);
  o.signal.removeEventListener('abort', onAbort);
  out.end();
  err.end();
  // Whatever the process left behind (a browser whose parent died, a detached helper) goes now.
  await killSandboxTree(marks);
  const spawnError =
    sub.pid === undefined || (res.failed && res.exitCode === undefined && res.signal === undefined && !stoppedBy)
      ? (res.shortMessage ?? res.message ?? 'the process could not be started')
      : undefined;
  return { exitCode: res.exitCode ?? null, signal: res.signal ?? null, stoppedBy, spawnError };
}
