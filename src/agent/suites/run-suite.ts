/**
 * One run of a Playwright check suite, start to end (docs/suites.md):
 *   1. a fresh job folder (0700): project/, out/, home/ (HOME), tmp/ (TMPDIR);
 *   2. the archive, downloaded by SHA-256 and unpacked safely (../../shared/suite-archive.ts);
 *   3. dependencies installed with the package manager the lockfile names, the agent's proxy
 *      variables present for this step only, or restored from the dependency cache;
 *   4. `playwright test` on the suite's engine with a wrapper config (system Chromium, json + html
 *      reporters, output folder, global timeout), CI=true only for test sessions, OUTPOST=true always;
 *   5. per-test results from the JSON report, artifacts, and the verdict.
 * The global timeout covers install and tests. Cancel, the global timeout and the daemon's limit
 * stop the running process with SIGINT first so Playwright marks the interrupted tests and writes
 * its report. Everything the job started is killed and its folder removed at the end.
 */
import { playwrightBrowsersFolder } from './browsers-folder.ts';
import { randomBytes, randomUUID } from 'node:crypto';
import { access, readFile, realpath, rm } from 'node:fs/promises';
import path from 'node:path';
import type { Logger } from 'pino';
import type { PlaywrightCheckDefinition, PlaywrightCheckResult, SuiteRunStatus } from '../../shared/checks/types.ts';
import { extractSuiteArchive, projectLayout, projectProblems, SuiteArchiveError } from '../../shared/suite-archive.ts';
import type { CheckOutcome } from '../checks/runner.ts';
import { NO_ISOLATION, type SandboxIsolation } from '../sandbox/isolation.ts';
import { killSandboxTree, type SandboxMarks } from '../sandbox/procfs.ts';
import { type ArtifactCollector, collectSuiteArtifacts } from './artifacts.ts';
import type { BundleSource } from './bundle-source.ts';
import type { SuiteRunnerConfig } from './config.ts';
import { DependencyCache, dependencyCacheKey } from './dependency-cache.ts';
import { enginePath, installCommand, packageManagerOf, type ResolvedEngine, resolveEngine } from './engines.ts';
import { SuiteLog, type SuiteLogLine } from './log.ts';
import { runSuiteProcess } from './process.ts';
import { type ParsedReport, readReport, summarise } from './report.ts';
import {
  agentFolder,
  handOver,
  insideJob,
  makeJobFolder,
  releaseSuiteUid,
  SharedFolderError,
  type SuiteUid,
  SuiteUidUnavailableError,
  takeSuiteUid,
} from './suite-uid.ts';
import { writeWrapperConfig } from './wrapper-config.ts';

export const SUITE_MARKER_VAR = 'OUTPOST_SUITE_ID';

export interface SuiteRunContext {
  config: SuiteRunnerConfig;
  bundles: BundleSource;
  signal: AbortSignal;
  log: Logger;
  artifacts?: ArtifactCollector;
  /** The agent's environment for LANG and TZ only (tests pass their own). */
  agentEnv?: NodeJS.ProcessEnv;
  /** A uid of its own for the run's install and tests (../sandbox/isolation.ts), or none: the agent's user. */
  isolation?: SandboxIsolation;
}

/** Why the run stopped before it could finish on its own. */
type Stop = 'cancelled' | 'timed-out' | undefined;

/** A failure before any test ran; `agentFault` marks the agent's own (engine missing, download failed). */
class SetupFailure extends Error {
  readonly phase: string;
  readonly agentFault: boolean;
  constructor(phase: string, message: string, agentFault = false) {
    super(message);
    this.phase = phase;
    this.agentFault = agentFault;
  }
}

const SAFE_LANG = /^[A-Za-z0-9_.@-]{1,64}$/;
const SAFE_TZ = /^[A-Za-z0-9_+\-/:.]{1,64}$/;

async function exists(p: string): Promise<boolean> {
  try {
    await access(p);
    return true;
  } catch {
    return false;
  }
}

/** The environment of both steps, built from nothing: the agent's own variables never reach the suite. */
function baseEnv(o: {
  check: PlaywrightCheckDefinition;
  engine: ResolvedEngine;
  config: SuiteRunnerConfig;
  home: string;
  tmp: string;
  marker: string;
  agentEnv: NodeJS.ProcessEnv;
}) {
  const env: Record<string, string> = {};
  // The check's variables first: what the agent sets below wins over them.
  for (const v of o.check.environmentVariables ?? []) env[v.key] = v.value;
  delete env.CI;
  const lang = o.agentEnv.LANG && SAFE_LANG.test(o.agentEnv.LANG) ? o.agentEnv.LANG : 'C.UTF-8';
  const tz = o.agentEnv.TZ && SAFE_TZ.test(o.agentEnv.TZ) && !o.agentEnv.TZ.includes('..') ? o.agentEnv.TZ : 'UTC';
  Object.assign(env, {
    PATH: enginePath(o.config.enginesDir, o.engine),
    HOME: o.home,
    TMPDIR: o.tmp,
    LANG: lang,
    TZ: tz,
    NODE_OPTIONS: '',
    FORCE_COLOR: '0',
    OUTPOST: 'true',
    PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD: '1',
    [SUITE_MARKER_VAR]: o.marker,
  });
  if (o.check.testSession) env.CI = 'true';
  return env;
}

/** The proxy variables, both spellings, and the extra CA file: for the install only. */
function installOnlyEnv(config: SuiteRunnerConfig): Record<string, string> {
  const env: Record<string, string> = {};
  const set = (name: string, value: string | undefined) => {
    if (value === undefined) return;
    env[name] = value;
    env[name.toLowerCase()] = value;
  };
  set('HTTP_PROXY', config.proxy.httpProxy);
  set('HTTPS_PROXY', config.proxy.httpsProxy);
  set('NO_PROXY', config.proxy.noProxy);
  if (config.extraCaCerts) env.NODE_EXTRA_CA_CERTS = config.extraCaCerts;
  // npm asks the registry for its own newer version on every run otherwise.
  env.npm_config_update_notifier = 'false';
  return env;
}

/** `@playwright/test`'s (or `playwright`'s) CLI, looked up from the project folder towards the lockfile's. */
async function playwrightCli(projectDir: string, stopAt: string): Promise<string | undefined> {
  let dir = projectDir;
  for (;;) {
    for (const pkg of ['@playwright/test', 'playwright']) {
      const cli = path.join(dir, 'node_modules', pkg, 'cli.js');
      if (await exists(cli)) return cli;
    }
    if (dir === stopAt || path.dirname(dir) === dir || !dir.startsWith(stopAt)) return undefined;
    dir = path.dirname(dir);
  }
}

async function versionOf(engine: ResolvedEngine): Promise<string | null> {
  if (engine.kind === 'bun') return '1.3';
  const m = /node_modules\/(node\d+)\//.exec(engine.bin);
  return m?.[1] ? m[1].slice(4) : null;
}

function firstLine(s: string): string {
  const line = s.split('\n').find((l) => l.trim() !== '') ?? s;
  return line.trim().slice(0, 300);
}

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

export async function runSuite(check: PlaywrightCheckDefinition, ctx: SuiteRunContext): Promise<CheckOutcome> {
  const started = new Date();
  const deadline = started.getTime() + check.globalTimeoutMs;
  const log = new SuiteLog(ctx.config.logMaxBytes);
  const marker = randomUUID();
  const timings = { unpackMs: 0, installMs: 0, testMs: 0 };
  let engine: ResolvedEngine | undefined;
  let packageManager: string | null = null;
  let cacheState: PlaywrightCheckResult['dependencyCache'] = ctx.config.dependencyCache ? 'miss' : 'off';
  let report: ParsedReport | undefined;
  let globalTimeoutReached = false;
  let setup: SetupFailure | undefined;
  let testExit: number | null = null;
  let collected = {
    names: [] as string[],
    traces: [] as Array<{ name: string; filename: string }>,
    videos: [] as string[],
    jsonReport: null as string | null,
    htmlReport: null as string | null,
  };

  const isolation = ctx.isolation ?? NO_ISOLATION;
  // Passable, not listable: a sandbox uid reaches its own job folder only.
  await agentFolder(ctx.config.jobsRoot, 'TMPDIR (the suites jobs folder)', 0o711);
  // A short folder name: Chromium's singleton socket lives under TMPDIR, and a Unix socket path
  // may not pass 107 bytes.
  const jobDir = path.join(await realpath(ctx.config.jobsRoot), randomBytes(6).toString('hex'));
  const dirs = {
    project: path.join(jobDir, 'project'),
    out: path.join(jobDir, 'out'),
    home: path.join(jobDir, 'home'),
    tmp: path.join(jobDir, 't'),
  };
  // The agent's own corner of the job folder (the zipped HTML report): the sandbox cannot write there.
  const agentDir = path.join(jobDir, 'a');
  const marks: SandboxMarks = { rootPid: undefined, jobDir, envMarker: `${SUITE_MARKER_VAR}=${marker}` };
  let who: SuiteUid | undefined;
  const stopReason = (): Stop => {
    if (!ctx.signal.aborted) return undefined;
    const reason = ctx.signal.reason as { name?: string } | undefined;
    return reason?.name === 'TimeoutError' ? 'timed-out' : 'cancelled';
  };

  try {
    try {
      who = takeSuiteUid(isolation);
    } catch (err) {
      if (err instanceof SuiteUidUnavailableError) throw new SetupFailure('sandbox', err.message, true);
      throw err;
    }
    if (who) marks.uid = who.uid;
    await makeJobFolder(jobDir, [...Object.values(dirs), agentDir], who);

    // ---- engine and archive
    try {
      engine = await resolveEngine(ctx.config.enginesDir, check.engine);
    } catch (err) {
      throw new SetupFailure('engine', (err as Error).message, true);
    }
    const t0 = Date.now();
    let bytes: Buffer;
    try {
      bytes = await ctx.bundles.fetch(check.codeBundle, ctx.signal);
    } catch (err) {
      if (stopReason()) throw new SetupFailure('download', 'stopped while downloading the suite archive');
      throw new SetupFailure('download', (err as Error).message, true);
    }
    let files: string[];
    try {
      files = (
        await extractSuiteArchive(bytes, dirs.project, {
          maxEntries: ctx.config.maxEntries,
          unpackedMaxBytes: ctx.config.unpackedMaxBytes,
        })
      ).files;
    } catch (err) {
      if (err instanceof SuiteArchiveError)
        throw new SetupFailure('unpack', `the suite archive cannot be used: ${err.message}`);
      throw err;
    }
    timings.unpackMs = Date.now() - t0;
    const problems = projectProblems(files, check.workingDir);
    if (problems.length > 0)
      throw new SetupFailure('unpack', `the suite archive is not a Playwright project: ${problems.join('; ')}`);
    const layout = projectLayout(files, check.workingDir);
    const projectDir = path.join(dirs.project, layout.workingDir);
    const lockfileRel = layout.lockfilePath ?? '';
    const lockDir = path.join(dirs.project, path.dirname(lockfileRel));
    const pm = packageManagerOf(layout.lockfile ?? 'package-lock.json');
    packageManager = pm;
    const env = baseEnv({
      check,
      engine,
      config: ctx.config,
      home: dirs.home,
      tmp: dirs.tmp,
      marker,
      agentEnv: ctx.agentEnv ?? process.env,
    });

    // ---- install (or restore)
    const t1 = Date.now();
    const cache = ctx.config.dependencyCache ? await openDependencyCache(ctx.config) : undefined;
    const key = cache
      ? dependencyCacheKey({
          scope: `${check.accountId}/${check.id}`,
          lockfile: await readFile(path.join(dirs.project, lockfileRel)),
          packageJson: await readFile(path.join(lockDir, 'package.json')).catch(() => Buffer.alloc(0)),
          packageManager: pm,
          installArgs: check.installArgs,
          engine: check.engine,
        })
      : undefined;
    const hit = cache && key ? await cache.restore(key, lockDir) : false;
    // What the agent unpacked and restored becomes the run's, before any of its code runs.
    await handOver(Object.values(dirs), who);
    if (hit) {
      cacheState = 'hit';
      log.note(`dependencies restored from the dependency cache (${layout.lockfile}, key ${key?.slice(0, 12)})`);
    } else {
      const cmd = installCommand(ctx.config.enginesDir, engine, pm, check.installArgs);
      log.note(
        `installing dependencies with ${pm} (${layout.lockfile}) on ${check.engine}: ${pm} ${cmd.args.slice(pm === 'bun' ? 0 : 1).join(' ')}`,
      );
      const res = await runSuiteProcess({
        file: cmd.file,
        args: cmd.args,
        cwd: lockDir,
        env: { ...env, ...installOnlyEnv(ctx.config) },
        log,
        phase: 'install',
        signal: ctx.signal,
        deadline,
        graceMs: 1_000,
        jobDir,
        marker: marks.envMarker,
        runAs: who,
      });
      timings.installMs = Date.now() - t1;
      if (res.stoppedBy === 'deadline') {
        globalTimeoutReached = true;
        throw new SetupFailure(
          'install',
          `the global timeout of ${Math.round(check.globalTimeoutMs / 1000)} s was reached while installing dependencies`,
        );
      }
      if (res.stoppedBy === 'abort') throw new SetupFailure('install', 'stopped while installing dependencies');
      if (res.spawnError)
        throw new SetupFailure('install', `the package manager could not be started: ${res.spawnError}`, true);
      if (res.exitCode !== 0) {
        const tail = log.tail('install', 3).join(' | ');
        throw new SetupFailure(
          'install',
          `dependency install failed: ${pm} exited with ${res.signal ? `signal ${res.signal}` : `code ${res.exitCode}`}${tail ? `: ${tail.slice(0, 500)}` : ''}`,
        );
      }
      // The install's processes are all gone (runSuiteProcess killed them): what it wrote stands still.
      const modules = await insideJob(jobDir, path.join(lockDir, 'node_modules'));
      if (cache && key && modules) {
        await cache.store(key, modules);
        log.note('dependencies stored in the dependency cache');
      }
    }
    timings.installMs = Date.now() - t1;

    // ---- tests
    const found = await playwrightCli(projectDir, dirs.project);
    const cli = found ? await insideJob(jobDir, found) : undefined;
    const realProjectDir = await insideJob(jobDir, projectDir);
    if (!realProjectDir)
      throw new SetupFailure(
        'test',
        `the project folder ${layout.workingDir || '.'} is not inside the suite's folder any more (the install replaced it)`,
      );
    if (!cli)
      throw new SetupFailure(
        'test',
        '@playwright/test is not among the installed dependencies: add it to package.json and the lockfile',
      );
    const remaining = deadline - Date.now();
    if (remaining <= 1_000) {
      globalTimeoutReached = true;
      throw new SetupFailure(
        'test',
        `the global timeout of ${Math.round(check.globalTimeoutMs / 1000)} s was reached before the tests could start`,
      );
    }
    const browsersPath = await playwrightBrowsersFolder({
      cliPath: cli,
      cacheDir: ctx.config.browsersCacheDir,
      ffmpegPath: ctx.config.ffmpegPath,
      jobDir,
    }).catch((err: unknown) => {
      if (err instanceof SharedFolderError) throw new SetupFailure('test', err.message, true);
      throw err;
    });
    const testEnv = browsersPath ? { ...env, PLAYWRIGHT_BROWSERS_PATH: browsersPath } : env;
    const jsonReport = path.join(dirs.out, 'report.json');
    const htmlReport = path.join(dirs.out, 'html');
    const wrapper = await writeWrapperConfig({
      projectDir: realProjectDir,
      configFile: layout.configFile ?? 'playwright.config.ts',
      chromiumPath: ctx.config.chromiumPath,
      jsonReport,
      htmlReport,
      outputDir: path.join(dirs.out, 'test-results'),
      // Playwright's own global timeout ends the run a little before ours, so it reports it itself;
      // the margin leaves it time to close the browser and write the report.
      globalTimeoutMs: Math.max(1_000, remaining - 3_000),
    });
    log.note(
      `running: playwright test ${check.testArgs.join(' ')} on ${check.engine}${check.testSession ? ' (test session: CI=true)' : ''}`.trim(),
    );
    const t2 = Date.now();
    const res = await runSuiteProcess({
      file: engine.bin,
      args: [cli, 'test', `--config=${wrapper}`, ...check.testArgs],
      cwd: projectDir,
      env: testEnv,
      log,
      phase: 'test',
      signal: ctx.signal,
      deadline: deadline + 500,
      graceMs: ctx.config.cancelGraceMs,
      jobDir,
      marker: marks.envMarker,
      runAs: who,
    });
    timings.testMs = Date.now() - t2;
    testExit = res.exitCode;
    if (res.spawnError) throw new SetupFailure('test', `the engine could not be started: ${res.spawnError}`, true);
    if (res.stoppedBy === 'deadline') {
      globalTimeoutReached = true;
      // Playwright's own timeout did not finish the run in time (a slow teardown on a busy machine):
      // say in the user's log why the tests stopped, since the report may be partial.
      log.note(
        `the global timeout of ${Math.round(check.globalTimeoutMs / 1000)} s was reached: the tests were stopped`,
      );
    }
    const realReport = await insideJob(jobDir, jsonReport);
    report = realReport ? await readReport(realReport) : undefined;
    if (report?.globalErrors.some((e) => /Timed out waiting .* for the (entire )?test (suite|run)/i.test(e)))
      globalTimeoutReached = true;
    if (!report && !stopReason() && !globalTimeoutReached) {
      const tail = log.tail('test', 4).join(' | ');
      throw new SetupFailure(
        'test',
        `Playwright did not produce a report (exit code ${res.exitCode ?? res.signal}): ${tail.slice(0, 600) || 'see the log'}`,
      );
    }
    if (
      report &&
      report.tests.length === 0 &&
      report.globalErrors.length > 0 &&
      !stopReason() &&
      !globalTimeoutReached
    ) {
      throw new SetupFailure('test', `Playwright could not run the suite: ${firstLine(report.globalErrors[0] ?? '')}`);
    }
    collected = await collectSuiteArtifacts({
      collector: ctx.artifacts,
      log,
      jobDir,
      agentDir,
      jsonReport,
      htmlReport,
      attachments: report?.attachments ?? [],
    });
  } catch (err) {
    if (!(err instanceof SetupFailure)) throw err;
    setup = err;
    log.note(`setup error (${err.phase}): ${err.message}`);
  } finally {
    await killSandboxTree(marks);
    await rm(jobDir, { recursive: true, force: true, maxRetries: 3 }).catch((err: unknown) =>
      ctx.log.warn({ err, jobDir }, 'could not remove a suite job folder'),
    );
    if (!(await releaseSuiteUid(isolation, who, marks)))
      ctx.log.warn({ uid: who?.uid, jobDir }, 'processes of a suite run outlived it: its sandbox uid stays taken');
  }

  const stop: Stop = stopReason();
  if (stop === 'timed-out') globalTimeoutReached = true;
  const stopped = new Date();
  const responseTime = stopped.getTime() - started.getTime();
  const tests = report?.tests ?? [];
  const summary = summarise(tests);
  let status: SuiteRunStatus;
  if (stop === 'cancelled') status = 'cancelled';
  else if (globalTimeoutReached) status = 'timed-out';
  else if (setup) status = 'setup-error';
  else status = testExit === 0 && summary.failed === 0 && summary.interrupted === 0 ? 'passed' : 'failed';

  const degradedReasons: string[] = [];
  if (status === 'passed') {
    if (check.degradedResponseTime !== null && responseTime > check.degradedResponseTime) {
      degradedReasons.push(
        `the run took ${responseTime} ms, over the degraded threshold of ${check.degradedResponseTime} ms`,
      );
    }
    if (summary.flaky > 0) degradedReasons.push(`${summary.flaky} flaky test(s) passed only on retry`);
  }

  const errors: Array<Record<string, unknown>> = [];
  if (setup) errors.push({ phase: setup.phase, message: setup.message });
  for (const e of report?.globalErrors ?? []) errors.push({ phase: 'test', message: e });
  for (const t of tests)
    if (t.error && t.outcome === 'unexpected')
      errors.push({ test: t.titlePath.join(' › '), projectName: t.projectName, status: t.status, message: t.error });

  const interruptedNote = summary.interrupted > 0 ? `; ${summary.interrupted} test(s) interrupted` : '';
  const failedTests = tests.filter((t) => t.outcome === 'unexpected' && t.status !== 'interrupted');
  let error: string | null = null;
  if (status === 'cancelled') error = `cancelled${setup ? ` during ${setup.phase}` : ''}${interruptedNote}`;
  else if (status === 'timed-out')
    error = `the global timeout of ${Math.round(check.globalTimeoutMs / 1000)} s was reached${setup ? ` during ${setup.phase}` : ''}${interruptedNote}`;
  else if (status === 'setup-error') error = `setup error: ${setup?.message ?? 'unknown'}`;
  else if (status === 'failed') {
    const first = failedTests[0];
    error = first
      ? `${failedTests.length} of ${summary.total} test(s) failed; first: ${first.titlePath.slice(1).join(' › ')}: ${firstLine(first.error ?? first.status)}`
      : `playwright test exited with code ${testExit}${interruptedNote}`;
  }

  const result: PlaywrightCheckResult = {
    status,
    degraded: degradedReasons.length > 0,
    degradedReasons,
    engine: check.engine,
    engineVersion: engine ? await versionOf(engine) : null,
    packageManager,
    playwrightVersion: report?.playwrightVersion ?? null,
    testSession: check.testSession,
    globalTimeoutMs: check.globalTimeoutMs,
    globalTimeoutReached,
    dependencyCache: cacheState,
    timings,
    summary,
    tests,
    errors,
    // The report opens with the run's verdict, degraded included, as the reference's reporter header does.
    jobLog: [reportHeader(started, status, degradedReasons, summary), ...log.lines()],
    jobAssets: collected.names,
    playwrightTraceFiles: collected.traces,
    playwrightTestVideos: collected.videos,
    playwrightTestTraces: collected.traces.map((t) => t.name),
    playwrightTestJsonReportFile: collected.jsonReport,
    playwrightHtmlReportFile: collected.htmlReport,
  };
  return {
    startedAt: started.toISOString(),
    stoppedAt: stopped.toISOString(),
    responseTime,
    hasFailures: status !== 'passed',
    // Setup errors are errors of the suite (or, for a missing engine or archive, of the agent);
    // failing tests are failures, not errors.
    hasErrors: status === 'setup-error' || setup?.agentFault === true,
    isDegraded: result.degraded,
    overMaxResponseTime: globalTimeoutReached,
    error,
    apiCheckResult: null,
    details: { playwrightCheckResult: result },
  };
}

/** The first line of the run's log: its status, DEGRADED with the reasons, and the test counts. */
function reportHeader(
  started: Date,
  status: SuiteRunStatus,
  degradedReasons: readonly string[],
  summary: { total: number; passed: number; failed: number; flaky: number },
): SuiteLogLine {
  const degraded = degradedReasons.length > 0 ? ` — DEGRADED: ${degradedReasons.join('; ')}` : '';
  const counts = `${summary.total} test(s): ${summary.passed} passed, ${summary.failed} failed, ${summary.flaky} flaky`;
  return {
    time: started.toISOString(),
    phase: 'agent',
    stream: 'agent',
    msg: `Outpost suite run: ${status.toUpperCase()}${degraded} (${counts})`,
  };
}
