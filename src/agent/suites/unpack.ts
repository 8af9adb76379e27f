/** A suite run's first phase: its engine found, its archive downloaded and unpacked into a project. */
import path from 'node:path';
import {
  extractSuiteArchive,
  projectLayout,
  projectProblems,
  SuiteArchiveError,
  type SuiteProjectLayout,
} from '../../shared/suite-archive.ts';
import { type PackageManager, packageManagerOf, type ResolvedEngine, resolveEngine } from './engines.ts';
import { SetupFailure, type SuiteRun, stopReason } from './run-state.ts';
import { baseEnv } from './suite-env.ts';

/** The unpacked project, as the install and the tests need it. */
export interface SuiteProject {
  engine: ResolvedEngine;
  layout: SuiteProjectLayout;
  /** The check's working folder, where `playwright test` runs. */
  projectDir: string;
  /** The lockfile, relative to the unpacked archive. */
  lockfileRel: string;
  /** The lockfile's folder, where the install runs. */
  lockDir: string;
  packageManager: PackageManager;
  /** The environment of both steps (./suite-env.ts). */
  env: Record<string, string>;
}

export async function unpackSuite(run: SuiteRun): Promise<SuiteProject> {
  const { check, ctx, job } = run;
  const engine = await resolveSuiteEngine(run);
  const t0 = Date.now();
  const files = await extractArchive(run, await downloadArchive(run));
  run.timings.unpackMs = Date.now() - t0;
  const problems = projectProblems(files, check.workingDir);
  if (problems.length > 0)
    throw new SetupFailure('unpack', `the suite archive is not a Playwright project: ${problems.join('; ')}`);
  const layout = projectLayout(files, check.workingDir);
  const lockfileRel = layout.lockfilePath ?? '';
  const pm = packageManagerOf(layout.lockfile ?? 'package-lock.json');
  run.packageManager = pm;
  const env = baseEnv({
    check,
    engine,
    config: ctx.config,
    home: job.dirs.home,
    tmp: job.dirs.tmp,
    marker: run.marker,
    agentEnv: ctx.agentEnv ?? process.env,
  });
  return {
    engine,
    layout,
    projectDir: path.join(job.dirs.project, layout.workingDir),
    lockfileRel,
    lockDir: path.join(job.dirs.project, path.dirname(lockfileRel)),
    packageManager: pm,
    env,
  };
}

async function resolveSuiteEngine(run: SuiteRun): Promise<ResolvedEngine> {
  try {
    run.engine = await resolveEngine(run.ctx.config.enginesDir, run.check.engine);
    return run.engine;
  } catch (err) {
    throw new SetupFailure('engine', (err as Error).message, true);
  }
}

async function downloadArchive(run: SuiteRun): Promise<Buffer> {
  try {
    return await run.ctx.bundles.fetch(run.check.codeBundle, run.ctx.signal);
  } catch (err) {
    if (stopReason(run)) throw new SetupFailure('download', 'stopped while downloading the suite archive');
    throw new SetupFailure('download', (err as Error).message, true);
  }
}

/** The archive unpacked into the project folder: the names of its files. */
async function extractArchive(run: SuiteRun, bytes: Buffer): Promise<string[]> {
  try {
    const { files } = await extractSuiteArchive(bytes, run.job.dirs.project, {
      maxEntries: run.ctx.config.maxEntries,
      unpackedMaxBytes: run.ctx.config.unpackedMaxBytes,
    });
    return files;
  } catch (err) {
    if (err instanceof SuiteArchiveError)
      throw new SetupFailure('unpack', `the suite archive cannot be used: ${err.message}`);
    throw err;
  }
}
