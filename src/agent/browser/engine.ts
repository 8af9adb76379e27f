/**
 * Runs one browser or multistep check (src/agent/checks/browser.ts and multistep.ts):
 *
 *   a sandbox of the job's runtime (src/agent/sandbox/: a child process of the runtime's Node with
 *   the environment allowlist, its own job folder as cwd, HOME and TMPDIR, a memory watchdog over
 *   the whole tree) → the job folder prepared (./script-files.ts) → the harness runs the script
 *   (./child/harness.cjs: the Playwright Test CLI for `@playwright/test` scripts, in-process for
 *   plain scripts), Playwright from the runtime and the system Chromium → what it left read back
 *   (./report.ts), artifacts scrubbed and handed to the uploader (./artifacts.ts) → the sandbox
 *   disposed.
 *
 * Chromium never outlives its job: every process the run started (the CLI, its worker, Chromium
 * and its helpers) is in the sandbox's process tree, carries its marker variable and works in its
 * job folder, so the sandbox's kill finds it; Chromium's profile and Playwright's temporary folders
 * are inside the job folder (TMPDIR), which is removed with it. dispose() is awaited before the
 * result is returned, on success, failure, timeout, crash and cancel alike.
 *
 * The sandbox runs without Node's permission model (Chromium is a child process, which the model
 * forbids); the process boundary, the environment allowlist, the watchdog and the sandbox's own uid
 * (../sandbox/isolation.ts: it cannot signal the agent or another job) remain.
 */
import { access, readFile } from 'node:fs/promises';
import path from 'node:path';
import type {
  BrowserCheckDefinition,
  BrowserCheckResult,
  BrowserLogLine,
  BrowserPageVisit,
  MultiStepCheckDefinition,
} from '../../shared/checks/types.ts';
import { runtimeNeededBy } from '../../shared/runtimes.ts';
import { agentErrorOutcome } from '../checks/outcome.ts';
import type { CheckContext, CheckOutcome } from '../checks/runner.ts';
import type { Runtime } from '../runtimes.ts';
import { RuntimeUnavailableError, SandboxStartError } from '../sandbox/errors.ts';
import type { SandboxPool } from '../sandbox/pool.ts';
import { SandboxProcess } from '../sandbox/process.ts';
import { DEFAULT_SANDBOX_LIMITS, type StepOutcome } from '../sandbox/types.ts';
import { Scrubber } from '../scrub/scrubber.ts';
import { type Collected, collectArtifacts, listFiles, type RunArtifactSink } from './artifacts.ts';
import {
  bareError,
  failedVerdict,
  type HarnessResult,
  type PlaywrightReport,
  type RunVerdict,
  relativize,
  stripAnsi,
  summarize,
  verdictOfReport,
  verdictOfScript,
} from './report.ts';
import {
  HARNESS_PATH,
  type PreparedJob,
  prepareJobFolder,
  REPORT_FILE,
  type ScriptEngine,
  scriptEngineOf,
} from './script-files.ts';
import { type BrowserSettings, loadBrowserSettings } from './settings.ts';

export { collectArtifacts, type RunArtifactSink } from './artifacts.ts';

/** What a browser run takes beyond CheckContext (tests set these; the daemon passes none of them). */
export interface BrowserCheckContext extends Omit<CheckContext, 'artifacts'> {
  /** The run's artifact collector: the daemon passes the uploader's; without one, nothing is uploaded. */
  artifacts?: RunArtifactSink;
  /** Where job folders go; default the sandbox's. */
  jobsRoot?: string;
  /** Overrides of the environment's browser settings. */
  browser?: Partial<BrowserSettings>;
}

type ScriptedCheck = BrowserCheckDefinition | MultiStepCheckDefinition;

/** Time kept back from the run's limit for saving the trace and video and reading results. */
function reserveMs(timeoutMs: number): number {
  return Math.min(15_000, Math.max(1000, Math.floor(timeoutMs * 0.3)));
}

let defaultSettings: BrowserSettings | undefined;

async function readJson<T>(file: string): Promise<T | null> {
  try {
    return JSON.parse(await readFile(file, 'utf8')) as T;
  } catch {
    return null;
  }
}

function describeStep(outcome: Exclude<StepOutcome, { kind: 'ok' }>): { error: string; agentFault: boolean } {
  switch (outcome.kind) {
    case 'script-error':
      return { error: `the browser run broke: ${outcome.error.name}: ${outcome.error.message}`, agentFault: true };
    case 'timeout':
      return {
        error: `the script timed out: it ran longer than ${outcome.limitMs} ms and was stopped with its browser`,
        agentFault: false,
      };
    case 'memory':
      return {
        error: `the script used too much memory and was stopped with its browser: ${outcome.detail}`,
        agentFault: false,
      };
    case 'exited':
      return {
        error: `the script ended its process early (${outcome.signal ? `signal ${outcome.signal}` : `exit code ${outcome.code}`}) before it finished`,
        agentFault: false,
      };
    case 'protocol':
      return { error: `the browser run broke the sandbox's protocol: ${outcome.detail}`, agentFault: true };
    case 'aborted':
      return { error: 'the run was stopped: it was cancelled or reached its time limit', agentFault: false };
  }
}

/** Runs a browser (`BROWSER`) or multistep (`MULTI_STEP`) check; never throws for what the script does. */
export async function runPlaywrightCheck(check: ScriptedCheck, ctx: BrowserCheckContext): Promise<CheckOutcome> {
  const startedAt = new Date();
  const t0 = performance.now();
  defaultSettings ??= loadBrowserSettings();
  const settings: BrowserSettings = { ...defaultSettings, ...ctx.browser };
  const runtimeId = runtimeNeededBy(check) ?? '';
  const pool = ctx.sandboxes;
  const runtime = pool?.runtime(runtimeId);
  if (!pool || !runtime) {
    const error = new RuntimeUnavailableError(runtimeId, pool?.runtimeIds ?? []).message;
    return agentErrorOutcome(startedAt, error, { hasFailures: true });
  }
  try {
    await access(settings.chromiumPath);
  } catch {
    return agentErrorOutcome(
      startedAt,
      `agent error: Chromium was not found at ${settings.chromiumPath}; install Debian's chromium package or set CHROMIUM_PATH`,
    );
  }

  const engine = scriptEngineOf(check.script);
  const hardLimitMs = Math.max(1000, ctx.timeoutMs - Math.min(2000, Math.floor(ctx.timeoutMs * 0.05)));
  const softLimitMs = Math.max(500, ctx.timeoutMs - reserveMs(ctx.timeoutMs));

  let sandbox: SandboxProcess;
  try {
    sandbox = await startSandbox(pool, runtime, settings, ctx);
  } catch (err) {
    if (err instanceof SandboxStartError) return agentErrorOutcome(startedAt, `agent error: ${err.message}`);
    throw err;
  }

  try {
    const plan = { engine, settings, runtimeDir: runtime.dir, hardLimitMs, softLimitMs, startedAt, t0, runtimeId };
    return await runInSandbox({ check, ctx, sandbox, plan, jobDir: sandbox.jobDir, outDir: outDirOf(sandbox.jobDir) });
  } finally {
    await sandbox.dispose().catch((err: unknown) => ctx.log.error({ err }, 'could not clean up a browser sandbox'));
  }
}

/** A ready sandbox for the run, without the permission model; a second one is tried if the first fails to start. */
async function startSandbox(
  pool: SandboxPool,
  runtime: Runtime,
  settings: BrowserSettings,
  ctx: BrowserCheckContext,
): Promise<SandboxProcess> {
  const start = async (): Promise<SandboxProcess> => {
    const s = await SandboxProcess.start({
      runtime,
      limits: {
        ...DEFAULT_SANDBOX_LIMITS,
        ...pool.limits,
        rssMb: settings.memoryMb,
        heapMb: Math.max(256, Math.floor(settings.memoryMb / 2)),
        outputBytes: 512 * 1024,
      },
      permissions: false,
      // Without the permission model, the sandbox's own uid is what keeps the script's hands off the agent.
      isolation: pool.isolation,
      ...(ctx.jobsRoot ? { jobsRoot: ctx.jobsRoot } : {}),
    });
    try {
      await s.ready();
    } catch (err) {
      await s.dispose();
      throw err;
    }
    return s;
  };
  try {
    return await start();
  } catch (first) {
    ctx.log.warn({ err: first }, 'a browser sandbox could not start; trying once more');
    return start();
  }
}

/** Where the harness and the page recorders leave their files. */
function outDirOf(jobDir: string): string {
  return path.join(jobDir, '.outpost');
}

interface RunPlan {
  engine: ScriptEngine;
  settings: BrowserSettings;
  runtimeDir: string;
  hardLimitMs: number;
  softLimitMs: number;
  startedAt: Date;
  t0: number;
  runtimeId: string;
}

/** One run in its started sandbox: what every phase below reads. */
interface SandboxRun {
  check: ScriptedCheck;
  ctx: BrowserCheckContext;
  sandbox: SandboxProcess;
  plan: RunPlan;
  jobDir: string;
  outDir: string;
}

/** How the harness's step ended, and when. */
interface HarnessEnd {
  step: StepOutcome;
  endTime: number;
  responseTime: number;
}

/** What the run's results said: the verdict, and the agent's fault when the agent broke the run. */
interface Judgement {
  verdict: RunVerdict;
  agentFault: string | null;
}

/** Everything the outcome is made of. */
interface Finished extends HarnessEnd, Judgement {
  pages: BrowserPageVisit[];
  collected: Collected;
}

/** The run in its sandbox, phase by phase: the folder, the harness, secrets, the verdict, pages, artifacts. */
async function runInSandbox(run: SandboxRun): Promise<CheckOutcome> {
  const prepared = await prepareFolder(run);
  const end = await runHarness(run, prepared);
  const scrubber = await secretScrubber(run, end.step);
  // A cancelled run (or one the daemon stopped at its limit) is reported by the daemon; nothing to collect.
  if (end.step.kind === 'aborted') {
    return agentErrorOutcome(run.plan.startedAt, describeStep(end.step).error, {
      hasErrors: false,
      hasFailures: true,
      responseTime: end.responseTime,
    });
  }
  const judgement = await judge(run, end.step);
  const pages = await readPages(run.outDir);
  const collected = await collectArtifacts(run.jobDir, run.plan.engine, scrubber, run.ctx);
  return scrubber.scrubDeep(outcomeOf(run, { ...end, ...judgement, pages, collected }));
}

/** The job folder made ready for the script, then handed to the sandbox's uid. */
async function prepareFolder({ check, sandbox, plan, jobDir }: SandboxRun): Promise<PreparedJob> {
  const { settings } = plan;
  const prepared = await prepareJobFolder({
    jobDir,
    runtimeDir: plan.runtimeDir,
    engine: plan.engine,
    script: check.script,
    dependencies: check.dependencies ?? [],
    ffmpegPath: settings.ffmpegPath,
    // The CLI and its worker take a few seconds to start; globalTimeout holds the whole run to the limit.
    testTimeoutMs: Math.max(1000, plan.softLimitMs - (performance.now() - plan.t0) - 3000),
    globalTimeoutMs: Math.max(1000, plan.softLimitMs - (performance.now() - plan.t0)),
    chromiumPath: settings.chromiumPath,
    noSandbox: settings.noSandbox,
    args: settings.args,
  });
  await sandbox.adoptJobFolder();
  return prepared;
}

/** The harness's environment: the check's variables, then what Playwright and the harness need. */
function harnessEnv(check: ScriptedCheck, prepared: PreparedJob, settings: BrowserSettings): Record<string, string> {
  const env: Record<string, string> = {};
  for (const v of check.environmentVariables ?? []) env[v.key] = v.value;
  return Object.assign(env, {
    PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD: '1',
    PLAYWRIGHT_BROWSERS_PATH: prepared.browsersPath,
    OUTPOST_BROWSER_SETTINGS: JSON.stringify({
      chromiumPath: settings.chromiumPath,
      noSandbox: settings.noSandbox,
      args: settings.args,
    }),
    FORCE_COLOR: '0',
    NO_COLOR: '1',
    CI: '',
    OUTPOST: 'true',
  });
}

/** Runs the harness (./child/harness.cjs) as the sandbox's one step, within what is left of the run's limits. */
async function runHarness(
  { check, ctx, sandbox, plan, jobDir }: SandboxRun,
  prepared: PreparedJob,
): Promise<HarnessEnd> {
  const elapsed = (): number => performance.now() - plan.t0;
  const request = {
    engine: plan.engine,
    jobDir,
    code: check.script,
    cliPath: prepared.cliPath,
    configPath: prepared.configPath,
    // An instant, not a duration: the browser's start counts against the script's time.
    deadlineAt: Date.now() + Math.max(500, plan.softLimitMs - elapsed()),
    softLimitMs: plan.softLimitMs,
    // Saving traces, videos and screenshots after a failure must end before the hard limit.
    finishBy: Date.now() + Math.max(500, plan.hardLimitMs - elapsed() - 1500),
  };
  const step = await sandbox.run(
    {
      stage: 'setup',
      filename: 'outpost-browser.js',
      code: `return require(${JSON.stringify(HARNESS_PATH)}).run(request);`,
      env: harnessEnv(check, prepared, plan.settings),
      context: { request },
    },
    { timeoutMs: Math.max(1, plan.hardLimitMs - elapsed()), signal: ctx.signal },
  );
  return { step, endTime: Date.now(), responseTime: Math.round(performance.now() - plan.t0) };
}

/**
 * The run's own scrubber for what this module scrubs itself (traces, the report, the result): the
 * check's secret variables and what the script put under OUTPOST_SECRET_*. The daemon scrubs the
 * result again with its scrubber, which onSecret tells about those runtime secrets.
 */
async function secretScrubber({ check, ctx, outDir }: SandboxRun, step: StepOutcome): Promise<Scrubber> {
  const runtimeSecrets = new Set<string>(step.kind === 'ok' ? step.secrets : []);
  for (const f of await listFiles(outDir)) {
    if (/secrets-\d+\.json$/.test(f))
      for (const v of (await readJson<string[]>(f)) ?? []) if (typeof v === 'string') runtimeSecrets.add(v);
  }
  for (const s of runtimeSecrets) ctx.onSecret?.(s);
  const scrubber = new Scrubber();
  for (const v of check.environmentVariables ?? []) if (v.secret) scrubber.add(v.value);
  for (const s of runtimeSecrets) scrubber.add(s);
  return scrubber;
}

/** The verdict from what the step left: Playwright's report, the harness's result.json, or how the step broke. */
async function judge(
  { plan, jobDir, outDir }: SandboxRun,
  step: Exclude<StepOutcome, { kind: 'aborted' }>,
): Promise<Judgement> {
  if (step.kind !== 'ok') {
    const d = describeStep(step);
    const timedOut = step.kind === 'timeout';
    const error = bareError(d.error, timedOut ? 'TimeoutError' : 'Error');
    return { verdict: failedVerdict(error, timedOut), agentFault: d.agentFault ? d.error : null };
  }
  if (plan.engine === 'test') {
    const report = await readJson<PlaywrightReport>(path.join(jobDir, REPORT_FILE));
    const verdict = report
      ? verdictOfReport(report, jobDir)
      : failedVerdict(bareError('Playwright Test wrote no report; see the log'));
    return { verdict, agentFault: null };
  }
  const result = (await readJson<HarnessResult>(path.join(outDir, 'result.json'))) ?? {
    ok: false,
    error: { message: 'the script left no result' },
  };
  return { verdict: verdictOfScript(result, jobDir), agentFault: result.agentError || null };
}

/** The pages the recorders saw (./child/instrument.cjs), from each process's file. */
async function readPages(outDir: string): Promise<BrowserPageVisit[]> {
  const pages: BrowserPageVisit[] = [];
  for (const f of await listFiles(outDir))
    if (/pages-\d+\.json$/.test(f)) pages.push(...((await readJson<BrowserPageVisit[]>(f)) ?? []));
  return pages;
}

function outcomeOf(run: SandboxRun, f: Finished): CheckOutcome {
  const { verdict, agentFault } = f;
  const first = verdict.errors[0];
  return {
    startedAt: run.plan.startedAt.toISOString(),
    stoppedAt: new Date(f.endTime).toISOString(),
    responseTime: f.responseTime,
    hasFailures: agentFault === null ? !verdict.passed : false,
    hasErrors: agentFault !== null,
    isDegraded: false,
    overMaxResponseTime: false,
    error:
      agentFault !== null
        ? `agent error: ${agentFault}`
        : verdict.passed
          ? null
          : first
            ? summarize(first)
            : 'the script failed',
    apiCheckResult: null,
    details: { ...resultDetails(run, f), ...f.collected.details },
  };
}

/** details.browserCheckResult or details.multiStepCheckResult: the run's errors, log, pages and files. */
function resultDetails({ check, sandbox, plan, jobDir }: SandboxRun, { verdict, endTime, pages, collected }: Finished) {
  const { errors } = verdict;
  const common = {
    errors,
    startTime: plan.startedAt.getTime(),
    endTime,
    runtimeVersion: plan.runtimeId,
    jobLog: jobLogOf(sandbox, jobDir),
    jobAssets: collected.names,
    screenshots: collected.screenshots,
    playwrightTestTraces: collected.traces,
    ...(collected.report ? { playwrightTestJsonReportFile: collected.report } : {}),
  };
  if (check.checkType !== 'BROWSER')
    return { multiStepCheckResult: { ...common, ...(pages.length > 0 ? { pages } : {}) } };
  return {
    browserCheckResult: {
      type: plan.engine === 'test' ? 'PLAYWRIGHT_TEST' : 'PLAYWRIGHT_SCRIPT',
      traceSummary: traceSummaryOf(pages, errors.length),
      pages,
      playwrightTestVideos: collected.videos,
      ...common,
    } satisfies BrowserCheckResult,
  };
}

/** The sandbox's output as the check's log, paths shown relative to the job folder. */
function jobLogOf(sandbox: SandboxProcess, jobDir: string): BrowserLogLine[] {
  return sandbox.output().lines.map((l) => ({
    time: Date.parse(l.time),
    level: l.stream === 'stderr' ? 'ERROR' : 'INFO',
    msg: relativize(stripAnsi(l.msg), jobDir),
  }));
}

function traceSummaryOf(pages: BrowserPageVisit[], userScriptErrors: number): BrowserCheckResult['traceSummary'] {
  return {
    consoleErrors: pages.reduce((n, p) => n + p.consoleErrors.filter((e) => e.type === 'console').length, 0),
    networkErrors: pages.reduce((n, p) => n + p.failedRequests.length, 0),
    documentErrors: pages.reduce((n, p) => n + p.consoleErrors.filter((e) => e.type === 'pageerror').length, 0),
    userScriptErrors,
  };
}
