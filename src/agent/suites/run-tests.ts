/**
 * A suite run's third phase: `playwright test` on the suite's engine with a wrapper config (system
 * Chromium, json + html reporters, output folder, global timeout), then its report read and its
 * artifacts collected.
 */
import { access } from 'node:fs/promises';
import path from 'node:path';
import { collectSuiteArtifacts } from './artifacts.ts';
import { playwrightBrowsersFolder } from './browsers-folder.ts';
import { firstLine } from './outcome.ts';
import type { SuiteProcessExit } from './process.ts';
import { readReport } from './report.ts';
import { globalTimeoutReachedText, SetupFailure, type SuiteRun, stopReason } from './run-state.ts';
import { runJobProcess } from './suite-job.ts';
import { insideJob, SharedFolderError } from './suite-uid.ts';
import type { SuiteProject } from './unpack.ts';
import { writeWrapperConfig } from './wrapper-config.ts';

/** Where Playwright writes its reports, in the job's out/ folder. */
interface ReportPaths {
  json: string;
  html: string;
}

async function exists(p: string): Promise<boolean> {
  try {
    await access(p);
    return true;
  } catch {
    return false;
  }
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

export async function runTests(run: SuiteRun, project: SuiteProject): Promise<void> {
  const { reports, exit } = await runPlaywright(run, project);
  await readTestReport(run, reports, exit);
  run.collected = await collectSuiteArtifacts({
    collector: run.ctx.artifacts,
    log: run.log,
    jobDir: run.job.root,
    agentDir: run.job.agentDir,
    jsonReport: reports.json,
    htmlReport: reports.html,
    attachments: run.report?.attachments ?? [],
  });
}

/** The CLI and the project folder, both checked to be still inside the job after the install. */
async function locatePlaywright(run: SuiteRun, project: SuiteProject) {
  const jobDir = run.job.root;
  const found = await playwrightCli(project.projectDir, run.job.dirs.project);
  const cli = found ? await insideJob(jobDir, found) : undefined;
  const realProjectDir = await insideJob(jobDir, project.projectDir);
  if (!realProjectDir)
    throw new SetupFailure(
      'test',
      `the project folder ${project.layout.workingDir || '.'} is not inside the suite's folder any more (the install replaced it)`,
    );
  if (!cli)
    throw new SetupFailure(
      'test',
      '@playwright/test is not among the installed dependencies: add it to package.json and the lockfile',
    );
  return { cli, realProjectDir };
}

/** The wrapper config and the browsers folder set up, then `playwright test` run to its end. */
async function runPlaywright(
  run: SuiteRun,
  project: SuiteProject,
): Promise<{ reports: ReportPaths; exit: SuiteProcessExit }> {
  const { check, ctx, job } = run;
  const { cli, realProjectDir } = await locatePlaywright(run, project);
  const remaining = run.deadline - Date.now();
  if (remaining <= 1_000) {
    run.globalTimeoutReached = true;
    throw new SetupFailure('test', `${globalTimeoutReachedText(check)} before the tests could start`);
  }
  const browsersPath = await playwrightBrowsersFolder({
    cliPath: cli,
    cacheDir: ctx.config.browsersCacheDir,
    ffmpegPath: ctx.config.ffmpegPath,
    jobDir: job.root,
  }).catch((err: unknown) => {
    if (err instanceof SharedFolderError) throw new SetupFailure('test', err.message, true);
    throw err;
  });
  const testEnv = browsersPath ? { ...project.env, PLAYWRIGHT_BROWSERS_PATH: browsersPath } : project.env;
  const reports = { json: path.join(job.dirs.out, 'report.json'), html: path.join(job.dirs.out, 'html') };
  const wrapper = await writeWrapperConfig({
    projectDir: realProjectDir,
    configFile: project.layout.configFile ?? 'playwright.config.ts',
    chromiumPath: ctx.config.chromiumPath,
    jsonReport: reports.json,
    htmlReport: reports.html,
    outputDir: path.join(job.dirs.out, 'test-results'),
    // Playwright's own global timeout ends the run a little before ours, so it reports it itself;
    // the margin leaves it time to close the browser and write the report.
    globalTimeoutMs: Math.max(1_000, remaining - 3_000),
  });
  run.log.note(
    `running: playwright test ${check.testArgs.join(' ')} on ${check.engine}${check.testSession ? ' (test session: CI=true)' : ''}`.trim(),
  );
  const t2 = Date.now();
  const res = await runJobProcess(run, {
    file: project.engine.bin,
    args: [cli, 'test', `--config=${wrapper}`, ...check.testArgs],
    cwd: project.projectDir,
    env: testEnv,
    phase: 'test',
    deadline: run.deadline + 500,
    graceMs: ctx.config.cancelGraceMs,
  });
  run.timings.testMs = Date.now() - t2;
  run.testExit = res.exitCode;
  if (res.spawnError) throw new SetupFailure('test', `the engine could not be started: ${res.spawnError}`, true);
  if (res.stoppedBy === 'deadline') {
    run.globalTimeoutReached = true;
    // Playwright's own timeout did not finish the run in time (a slow teardown on a busy machine):
    // say in the user's log why the tests stopped, since the report may be partial.
    run.log.note(`${globalTimeoutReachedText(check)}: the tests were stopped`);
  }
  return { reports, exit: res };
}

/** The JSON report read; a SetupFailure when Playwright wrote none, or could not run a single test. */
async function readTestReport(run: SuiteRun, reports: ReportPaths, exit: SuiteProcessExit): Promise<void> {
  const realReport = await insideJob(run.job.root, reports.json);
  const report = realReport ? await readReport(realReport) : undefined;
  run.report = report;
  if (report?.globalErrors.some((e) => /Timed out waiting .* for the (entire )?test (suite|run)/i.test(e)))
    run.globalTimeoutReached = true;
  const stoppedEarly = () => stopReason(run) !== undefined || run.globalTimeoutReached;
  if (!report && !stoppedEarly()) {
    const tail = run.log.tail('test', 4).join(' | ');
    throw new SetupFailure(
      'test',
      `Playwright did not produce a report (exit code ${exit.exitCode ?? exit.signal}): ${tail.slice(0, 600) || 'see the log'}`,
    );
  }
  if (report && report.tests.length === 0 && report.globalErrors.length > 0 && !stoppedEarly()) {
    throw new SetupFailure('test', `Playwright could not run the suite: ${firstLine(report.globalErrors[0] ?? '')}`);
  }
}
