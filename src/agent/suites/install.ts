/**
 * A suite run's second phase: its dependencies restored from the dependency cache or installed with
 * the package manager the lockfile names, the agent's proxy variables present for this step only.
 */
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import type { SuiteRunnerConfig } from './config.ts';
import { DependencyCache, dependencyCacheKey } from './dependency-cache.ts';
import { installCommand } from './engines.ts';
import { globalTimeoutReachedText, SetupFailure, type SuiteRun } from './run-state.ts';
import { installOnlyEnv } from './suite-env.ts';
import { runJobProcess } from './suite-job.ts';
import { agentFolder, handOver, insideJob, SharedFolderError } from './suite-uid.ts';
import type { SuiteProject } from './unpack.ts';

/** The dependency cache, its folder checked to be the agent's alone (a sandbox could have made it first). */
async function openDependencyCache(config: SuiteRunnerConfig): Promise<DependencyCache> {
  try {
    await agentFolder(config.dependencyCacheDir, 'DEPENDENCY_CACHE_DIR', 0o700);
  } catch (err) {
    if (err instanceof SharedFolderError) throw new SetupFailure('install', err.message, true);
    throw err;
  }
  return new DependencyCache(config.dependencyCacheDir, config.dependencyCacheMaxEntries);
}

/** The project's cache entry: the run's check, its lockfile and package.json, how they are installed. */
async function cacheKey(run: SuiteRun, project: SuiteProject): Promise<string> {
  return dependencyCacheKey({
    scope: `${run.check.accountId}/${run.check.id}`,
    lockfile: await readFile(path.join(run.job.dirs.project, project.lockfileRel)),
    packageJson: await readFile(path.join(project.lockDir, 'package.json')).catch(() => Buffer.alloc(0)),
    packageManager: project.packageManager,
    installArgs: run.check.installArgs,
    engine: run.check.engine,
  });
}

export async function installDependencies(run: SuiteRun, project: SuiteProject): Promise<void> {
  const t1 = Date.now();
  const cache = run.ctx.config.dependencyCache ? await openDependencyCache(run.ctx.config) : undefined;
  const key = cache ? await cacheKey(run, project) : undefined;
  const hit = cache && key ? await cache.restore(key, project.lockDir) : false;
  // What the agent unpacked and restored becomes the run's, before any of its code runs.
  await handOver(Object.values(run.job.dirs), run.who);
  if (hit) {
    run.cacheState = 'hit';
    run.log.note(
      `dependencies restored from the dependency cache (${project.layout.lockfile}, key ${key?.slice(0, 12)})`,
    );
  } else {
    await runInstall(run, project, t1);
    // The install's processes are all gone (runSuiteProcess killed them): what it wrote stands still.
    const modules = await insideJob(run.job.root, path.join(project.lockDir, 'node_modules'));
    if (cache && key && modules) {
      await cache.store(key, modules);
      run.log.note('dependencies stored in the dependency cache');
    }
  }
  run.timings.installMs = Date.now() - t1;
}

/** The package manager's install, started at `t1`; a SetupFailure unless it finished cleanly. */
async function runInstall(run: SuiteRun, project: SuiteProject, t1: number): Promise<void> {
  const { check, ctx } = run;
  const pm = project.packageManager;
  const cmd = installCommand(ctx.config.enginesDir, project.engine, pm, check.installArgs);
  run.log.note(
    `installing dependencies with ${pm} (${project.layout.lockfile}) on ${check.engine}: ${pm} ${cmd.args.slice(pm === 'bun' ? 0 : 1).join(' ')}`,
  );
  const res = await runJobProcess(run, {
    file: cmd.file,
    args: cmd.args,
    cwd: project.lockDir,
    env: { ...project.env, ...installOnlyEnv(ctx.config) },
    phase: 'install',
    deadline: run.deadline,
    graceMs: 1_000,
  });
  run.timings.installMs = Date.now() - t1;
  if (res.stoppedBy === 'deadline') {
    run.globalTimeoutReached = true;
    throw new SetupFailure('install', `${globalTimeoutReachedText(check)} while installing dependencies`);
  }
  if (res.stoppedBy === 'abort') throw new SetupFailure('install', 'stopped while installing dependencies');
  if (res.spawnError)
    throw new SetupFailure('install', `the package manager could not be started: ${res.spawnError}`, true);
  if (res.exitCode !== 0) {
    const tail = run.log.tail('install', 3).join(' | ');
    throw new SetupFailure(
      'install',
      `dependency install failed: ${pm} exited with ${res.signal ? `signal ${res.signal}` : `code ${res.exitCode}`}${tail ? `: ${tail.slice(0, 500)}` : ''}`,
    );
  }
}
