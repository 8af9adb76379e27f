/** A suite run's last phase: its verdict, the error a user reads first, and the check result. */
import type { PlaywrightCheckResult, SuiteRunStatus } from '../../shared/checks/types.ts';
import type { CheckOutcome } from '../checks/runner.ts';
import type { ResolvedEngine } from './engines.ts';
import type { SuiteLogLine } from './log.ts';
import { summarise } from './report.ts';
import { globalTimeoutReachedText, type SuiteRun, stopReason } from './run-state.ts';

type Summary = ReturnType<typeof summarise>;

export function firstLine(s: string): string {
  const line = s.split('\n').find((l) => l.trim() !== '') ?? s;
  return line.trim().slice(0, 300);
}

async function versionOf(engine: ResolvedEngine): Promise<string | null> {
  if (engine.kind === 'bun') return '1.3';
  const m = /node_modules\/(node\d+)\//.exec(engine.bin);
  return m?.[1] ? m[1].slice(4) : null;
}

export async function suiteOutcome(run: SuiteRun): Promise<CheckOutcome> {
  const { check, started } = run;
  const stop = stopReason(run);
  if (stop === 'timed-out') run.globalTimeoutReached = true;
  const stopped = new Date();
  const responseTime = stopped.getTime() - started.getTime();
  const tests = run.report?.tests ?? [];
  const summary = summarise(tests);
  const status = runStatus(run, stop === 'cancelled', summary);
  const degradedReasons = status === 'passed' ? degradedReasonsOf(run, responseTime, summary) : [];
  const result: PlaywrightCheckResult = {
    status,
    degraded: degradedReasons.length > 0,
    degradedReasons,
    engine: check.engine,
    engineVersion: run.engine ? await versionOf(run.engine) : null,
    packageManager: run.packageManager,
    playwrightVersion: run.report?.playwrightVersion ?? null,
    testSession: check.testSession,
    globalTimeoutMs: check.globalTimeoutMs,
    globalTimeoutReached: run.globalTimeoutReached,
    dependencyCache: run.cacheState,
    timings: run.timings,
    summary,
    tests,
    errors: errorsOf(run),
    // The report opens with the run's verdict, degraded included, as the reference's reporter header does.
    jobLog: [reportHeader(started, status, degradedReasons, summary), ...run.log.lines()],
    jobAssets: run.collected.names,
    playwrightTraceFiles: run.collected.traces,
    playwrightTestVideos: run.collected.videos,
    playwrightTestTraces: run.collected.traces.map((t) => t.name),
    playwrightTestJsonReportFile: run.collected.jsonReport,
    playwrightHtmlReportFile: run.collected.htmlReport,
  };
  return {
    startedAt: started.toISOString(),
    stoppedAt: stopped.toISOString(),
    responseTime,
    hasFailures: status !== 'passed',
    // Setup errors are errors of the suite (or, for a missing engine or archive, of the agent);
    // failing tests are failures, not errors.
    hasErrors: status === 'setup-error' || run.setup?.agentFault === true,
    isDegraded: result.degraded,
    overMaxResponseTime: run.globalTimeoutReached,
    error: errorMessage(run, status, summary),
    apiCheckResult: null,
    details: { playwrightCheckResult: result },
  };
}

function runStatus(run: SuiteRun, cancelled: boolean, summary: Summary): SuiteRunStatus {
  if (cancelled) return 'cancelled';
  if (run.globalTimeoutReached) return 'timed-out';
  if (run.setup) return 'setup-error';
  return run.testExit === 0 && summary.failed === 0 && summary.interrupted === 0 ? 'passed' : 'failed';
}

/** Why a passed run is degraded: too slow, or flaky tests. */
function degradedReasonsOf(run: SuiteRun, responseTime: number, summary: Summary): string[] {
  const { check } = run;
  const reasons: string[] = [];
  if (check.degradedResponseTime !== null && responseTime > check.degradedResponseTime) {
    reasons.push(`the run took ${responseTime} ms, over the degraded threshold of ${check.degradedResponseTime} ms`);
  }
  if (summary.flaky > 0) reasons.push(`${summary.flaky} flaky test(s) passed only on retry`);
  return reasons;
}

/** The setup failure, Playwright's global errors, then each unexpected test's error. */
function errorsOf(run: SuiteRun): Array<Record<string, unknown>> {
  const errors: Array<Record<string, unknown>> = [];
  if (run.setup) errors.push({ phase: run.setup.phase, message: run.setup.message });
  for (const e of run.report?.globalErrors ?? []) errors.push({ phase: 'test', message: e });
  for (const t of run.report?.tests ?? [])
    if (t.error && t.outcome === 'unexpected')
      errors.push({ test: t.titlePath.join(' › '), projectName: t.projectName, status: t.status, message: t.error });
  return errors;
}

/** The outcome's one-line error: why the run did not pass, or null when it did. */
function errorMessage(run: SuiteRun, status: SuiteRunStatus, summary: Summary): string | null {
  const { setup } = run;
  const interruptedNote = summary.interrupted > 0 ? `; ${summary.interrupted} test(s) interrupted` : '';
  if (status === 'cancelled') return `cancelled${setup ? ` during ${setup.phase}` : ''}${interruptedNote}`;
  if (status === 'timed-out')
    return `${globalTimeoutReachedText(run.check)}${setup ? ` during ${setup.phase}` : ''}${interruptedNote}`;
  if (status === 'setup-error') return `setup error: ${setup?.message ?? 'unknown'}`;
  if (status !== 'failed') return null;
  const tests = run.report?.tests ?? [];
  const failedTests = tests.filter((t) => t.outcome === 'unexpected' && t.status !== 'interrupted');
  const first = failedTests[0];
  return first
    ? `${failedTests.length} of ${summary.total} test(s) failed; first: ${first.titlePath.slice(1).join(' › ')}: ${firstLine(first.error ?? first.status)}`
    : `playwright test exited with code ${run.testExit}${interruptedNote}`;
}

/** The first line of the run's log: its status, DEGRADED with the reasons, and the test counts. */
function reportHeader(
  started: Date,
  status: SuiteRunStatus,
  degradedReasons: readonly string[],
  summary: Summary,
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
