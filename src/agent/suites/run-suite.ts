/**
 * One run of a Playwright check suite, start to end (docs/suites.md), in phases over one SuiteRun
 * (./run-state.ts):
 *   1. a fresh job folder (0700): project/, out/, home/ (HOME), tmp/ (TMPDIR) (./suite-job.ts);
 *   2. the archive, downloaded by SHA-256 and unpacked safely (./unpack.ts);
 *   3. dependencies installed with the package manager the lockfile names, the agent's proxy
 *      variables present for this step only, or restored from the dependency cache (./install.ts);
 *   4. `playwright test` on the suite's engine with a wrapper config (system Chromium, json + html
 *      reporters, output folder, global timeout), CI=true only for test sessions, OUTPOST=true always
 *      (./run-tests.ts, ./suite-env.ts);
 *   5. per-test results from the JSON report, artifacts, and the verdict (./outcome.ts).
 * The global timeout covers install and tests. Cancel, the global timeout and the daemon's limit
 * stop the running process with SIGINT first so Playwright marks the interrupted tests and writes
 * its report. Everything the job started is killed and its folder removed at the end.
 */
import type { PlaywrightCheckDefinition } from '../../shared/checks/types.ts';
import type { CheckOutcome } from '../checks/runner.ts';
import { installDependencies } from './install.ts';
import { suiteOutcome } from './outcome.ts';
import { SetupFailure, type SuiteRunContext } from './run-state.ts';
import { runTests } from './run-tests.ts';
import { cleanUpJob, openSuiteRun, takeSandbox } from './suite-job.ts';
import { unpackSuite } from './unpack.ts';

export type { SuiteRunContext } from './run-state.ts';
export { SUITE_MARKER_VAR } from './suite-env.ts';

export async function runSuite(check: PlaywrightCheckDefinition, ctx: SuiteRunContext): Promise<CheckOutcome> {
  const run = await openSuiteRun(check, ctx);
  try {
    await takeSandbox(run);
    const project = await unpackSuite(run);
    await installDependencies(run, project);
    await runTests(run, project);
  } catch (err) {
    if (!(err instanceof SetupFailure)) throw err;
    run.setup = err;
    run.log.note(`setup error (${err.phase}): ${err.message}`);
  } finally {
    await cleanUpJob(run);
  }
  return suiteOutcome(run);
}
