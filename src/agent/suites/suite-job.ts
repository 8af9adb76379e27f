/** A suite run's job folder and sandbox uid: taken at its start, all of it given back at its end. */
import { randomBytes, randomUUID } from 'node:crypto';
import { realpath, rm } from 'node:fs/promises';
import path from 'node:path';
import type { PlaywrightCheckDefinition } from '../../shared/checks/types.ts';
import { NO_ISOLATION } from '../sandbox/isolation.ts';
import { killSandboxTree } from '../sandbox/procfs.ts';
import { SuiteLog } from './log.ts';
import { runSuiteProcess, type SuiteProcessExit, type SuiteProcessOptions } from './process.ts';
import { type JobFolders, SetupFailure, type SuiteRun, type SuiteRunContext } from './run-state.ts';
import { SUITE_MARKER_VAR } from './suite-env.ts';
import { agentFolder, makeJobFolder, releaseSuiteUid, SuiteUidUnavailableError, takeSuiteUid } from './suite-uid.ts';

/** The run's state, its clock started and its job folder named (not made yet). */
export async function openSuiteRun(check: PlaywrightCheckDefinition, ctx: SuiteRunContext): Promise<SuiteRun> {
  const started = new Date();
  const deadline = started.getTime() + check.globalTimeoutMs;
  const log = new SuiteLog(ctx.config.logMaxBytes);
  const marker = randomUUID();
  const isolation = ctx.isolation ?? NO_ISOLATION;
  const job = await nameJobFolder(ctx.config.jobsRoot);
  return {
    check,
    ctx,
    started,
    deadline,
    log,
    marker,
    timings: { unpackMs: 0, installMs: 0, testMs: 0 },
    isolation,
    job,
    marks: { rootPid: undefined, jobDir: job.root, envMarker: `${SUITE_MARKER_VAR}=${marker}` },
    packageManager: null,
    cacheState: ctx.config.dependencyCache ? 'miss' : 'off',
    globalTimeoutReached: false,
    testExit: null,
    collected: { names: [], traces: [], videos: [], jsonReport: null, htmlReport: null },
  };
}

async function nameJobFolder(jobsRoot: string): Promise<JobFolders> {
  // Passable, not listable: a sandbox uid reaches its own job folder only.
  await agentFolder(jobsRoot, 'TMPDIR (the suites jobs folder)', 0o711);
  // A short folder name: Chromium's singleton socket lives under TMPDIR, and a Unix socket path
  // may not pass 107 bytes.
  const root = path.join(await realpath(jobsRoot), randomBytes(6).toString('hex'));
  return {
    root,
    dirs: {
      project: path.join(root, 'project'),
      out: path.join(root, 'out'),
      home: path.join(root, 'home'),
      tmp: path.join(root, 't'),
    },
    agentDir: path.join(root, 'a'),
  };
}

/** Takes the run's sandbox uid (if isolated) and makes the job folder for it. */
export async function takeSandbox(run: SuiteRun): Promise<void> {
  try {
    run.who = takeSuiteUid(run.isolation);
  } catch (err) {
    if (err instanceof SuiteUidUnavailableError) throw new SetupFailure('sandbox', err.message, true);
    throw err;
  }
  if (run.who) run.marks.uid = run.who.uid;
  await makeJobFolder(run.job.root, [...Object.values(run.job.dirs), run.job.agentDir], run.who);
}

/** Kills whatever the run started, removes its folder and gives its uid back. */
export async function cleanUpJob(run: SuiteRun): Promise<void> {
  const jobDir = run.job.root;
  await killSandboxTree(run.marks);
  await rm(jobDir, { recursive: true, force: true, maxRetries: 3 }).catch((err: unknown) =>
    run.ctx.log.warn({ err, jobDir }, 'could not remove a suite job folder'),
  );
  if (!(await releaseSuiteUid(run.isolation, run.who, run.marks)))
    run.ctx.log.warn(
      { uid: run.who?.uid, jobDir },
      'processes of a suite run outlived it: its sandbox uid stays taken',
    );
}

/** Runs one step of the run (install, tests) in its job, as its uid, into its log, under its signal. */
export function runJobProcess(
  run: SuiteRun,
  o: Omit<SuiteProcessOptions, 'log' | 'signal' | 'jobDir' | 'marker' | 'runAs'>,
): Promise<SuiteProcessExit> {
  return runSuiteProcess({
    ...o,
    log: run.log,
    signal: run.ctx.signal,
    jobDir: run.job.root,
    marker: run.marks.envMarker,
    runAs: run.who,
  });
}
