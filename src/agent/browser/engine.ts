/**
 * Runs one browser or multistep check (src/agent/checks/browser.ts and multistep.ts):
 *
 *   a sandbox of the job's runtime (src/agent/sandbox/: a child process of the runtime's Node with
 *   the environment allowlist, its own job folder as cwd, HOME and TMPDIR, a memory watchdog over
 *   the whole tree) → the job folder prepared (./script-files.ts) → the harness runs the script
 *   (./child/harness.cjs: the Playwright Test CLI for `@playwright/test` scripts, in-process for
 *   plain scripts), Playwright from the runtime and the system Chromium → what it left read back
 *   (./report.ts), artifacts scrubbed and handed to the uploader → the sandbox disposed.
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
import { access, readdir, readFile, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type {
  BrowserCheckDefinition,
  BrowserCheckResult,
  BrowserLogLine,
  BrowserPageVisit,
  MultiStepCheckDefinition,
} from '../../shared/checks/types.ts';
import type { ArtifactKind, ArtifactNote, ArtifactRef } from '../../shared/artifacts.ts';
import { runtimeNeededBy } from '../../shared/runtimes.ts';
import type { ArtifactSpec, RunArtifacts } from '../artifacts/uploader.ts';
import type { CheckContext, CheckOutcome } from '../checks/runner.ts';
import { RuntimeUnavailableError, SandboxStartError } from '../sandbox/errors.ts';
import { SandboxProcess } from '../sandbox/process.ts';
import { DEFAULT_SANDBOX_LIMITS, type StepOutcome } from '../sandbox/types.ts';
import { Scrubber } from '../scrub/scrubber.ts';
import {
  type HarnessResult,
  type PlaywrightReport,
  type RunVerdict,
  relativize,
  stripAnsi,
  summarize,
  verdictOfReport,
  verdictOfScript,
} from './report.ts';
import { type BrowserSettings, loadBrowserSettings } from './settings.ts';
import { HARNESS_PATH, prepareJobFolder, REPORT_FILE, scriptEngineOf } from './script-files.ts';
import { scrubTraceZip } from './trace-scrub.ts';

/** What a browser run needs of the run's artifact collector (CheckContext.artifacts, src/agent/artifacts/). */
export type RunArtifactSink = Pick<RunArtifacts, 'add' | 'note' | 'details'>;

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

function agentError(startedAt: Date, error: string): CheckOutcome {
  return {
    startedAt: startedAt.toISOString(),
    stoppedAt: new Date().toISOString(),
    responseTime: 0,
    hasFailures: false,
    hasErrors: true,
    isDegraded: false,
    overMaxResponseTime: false,
    error,
    apiCheckResult: null,
  };
}

async function readJson<T>(file: string): Promise<T | null> {
  try {
    return JSON.parse(await readFile(file, 'utf8')) as T;
  } catch {
    return null;
  }
}

/** Files under `dir` (recursively, not following links), with `.outpost/ms-playwright` and node_modules left out. */
async function listFiles(dir: string): Promise<string[]> {
  const out: string[] = [];
  const walk = async (d: string, depth: number): Promise<void> => {
    if (depth > 6) return;
    let entries: import('node:fs').Dirent[];
    try {
      entries = await readdir(d, { withFileTypes: true });
    } catch {
      return;
    }
    for (const e of entries) {
      const p = path.join(d, e.name);
      if (e.isDirectory()) {
        if (
          e.name === 'node_modules' ||
          e.name === 'ms-playwright' ||
          e.name.startsWith('playwright') ||
          e.name.startsWith('.org.chromium')
        )
          continue;
        if (d === dir && (e.name === '.cache' || e.name === '.config' || e.name === '.local' || e.name === '.pki'))
          continue;
        await walk(p, depth + 1);
      } else if (e.isFile()) out.push(p);
    }
  };
  await walk(dir, 0);
  return out;
}

function kindOf(file: string): { kind: ArtifactKind; contentType: string } | null {
  const ext = path.extname(file).toLowerCase();
  if (ext === '.png') return { kind: 'screenshot', contentType: 'image/png' };
  if (ext === '.jpg' || ext === '.jpeg') return { kind: 'screenshot', contentType: 'image/jpeg' };
  if (ext === '.webm') return { kind: 'video', contentType: 'video/webm' };
  if (ext === '.zip' && path.basename(file).startsWith('trace'))
    return { kind: 'trace', contentType: 'application/zip' };
  return null;
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
    return { ...agentError(startedAt, error), hasFailures: true };
  }
  try {
    await access(settings.chromiumPath);
  } catch {
    return agentError(
      startedAt,
      `agent error: Chromium was not found at ${settings.chromiumPath}; install Debian's chromium package or set CHROMIUM_PATH`,
    );
  }

  const engine = scriptEngineOf(check.script);
  const hardLimitMs = Math.max(1000, ctx.timeoutMs - Math.min(2000, Math.floor(ctx.timeoutMs * 0.05)));
  const softLimitMs = Math.max(500, ctx.timeoutMs - reserveMs(ctx.timeoutMs));

  let sandbox: SandboxProcess | undefined;
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
    try {
      sandbox = await start();
    } catch (first) {
      ctx.log.warn({ err: first }, 'a browser sandbox could not start; trying once more');
      sandbox = await start();
    }
  } catch (err) {
    if (err instanceof SandboxStartError) return agentError(startedAt, `agent error: ${err.message}`);
    throw err;
  }

  try {
    return await runInSandbox(check, ctx, sandbox, {
      engine,
      settings,
      runtimeDir: runtime.dir,
      hardLimitMs,
      softLimitMs,
      startedAt,
      t0,
      runtimeId,
    });
  } finally {
    await sandbox.dispose().catch((err: unknown) => ctx.log.error({ err }, 'could not clean up a browser sandbox'));
  }
}

interface RunPlan {
  engine: 'test' | 'script';
  settings: BrowserSettings;
  runtimeDir: string;
  hardLimitMs: number;
  softLimitMs: number;
  startedAt: Date;
  t0: number;
  runtimeId: string;
}

async function runInSandbox(
  check: ScriptedCheck,
  ctx: BrowserCheckContext,
  sandbox: SandboxProcess,
  plan: RunPlan,
): Promise<CheckOutcome> {
  const { jobDir } = sandbox;
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

  const env: Record<string, string> = {};
  for (const v of check.environmentVariables ?? []) env[v.key] = v.value;
  Object.assign(env, {
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
  const options = {
    engine: plan.engine,
    jobDir,
    code: check.script,
    cliPath: prepared.cliPath,
    configPath: prepared.configPath,
    // An instant, not a duration: the browser's start counts against the script's time.
    deadlineAt: Date.now() + Math.max(500, plan.softLimitMs - (performance.now() - plan.t0)),
    softLimitMs: plan.softLimitMs,
    // Saving traces, videos and screenshots after a failure must end before the hard limit.
    finishBy: Date.now() + Math.max(500, plan.hardLimitMs - (performance.now() - plan.t0) - 1500),
  };
  const outcome = await sandbox.run(
    {
      stage: 'setup',
      filename: 'outpost-browser.js',
      code: `return require(${JSON.stringify(HARNESS_PATH)}).run(request);`,
      env,
      context: { request: options },
    },
    { timeoutMs: Math.max(1, plan.hardLimitMs - (performance.now() - plan.t0)), signal: ctx.signal },
  );
  const endTime = Date.now();
  const responseTime = Math.round(performance.now() - plan.t0);

  // Secrets: the check's secret variables and what the script put under OUTPOST_SECRET_*.
  const outDir = path.join(jobDir, '.outpost');
  const runtimeSecrets = new Set<string>(outcome.kind === 'ok' ? outcome.secrets : []);
  for (const f of await listFiles(outDir)) {
    if (/secrets-\d+\.json$/.test(f))
      for (const v of (await readJson<string[]>(f)) ?? []) if (typeof v === 'string') runtimeSecrets.add(v);
  }
  for (const s of runtimeSecrets) ctx.onSecret?.(s);
  // The run's own scrubber for what this module scrubs itself (traces, the report, the result); the
  // daemon scrubs the result again with its scrubber, which onSecret told about runtime secrets.
  const scrubber = new Scrubber();
  for (const v of check.environmentVariables ?? []) if (v.secret) scrubber.add(v.value);
  for (const s of runtimeSecrets) scrubber.add(s);

  // A cancelled run (or one the daemon stopped at its limit) is reported by the daemon; nothing to collect.
  if (outcome.kind === 'aborted') {
    return {
      ...agentError(plan.startedAt, describeStep(outcome).error),
      hasErrors: false,
      hasFailures: true,
      responseTime,
    };
  }

  let verdict: RunVerdict;
  let agentFault: string | null = null;
  if (outcome.kind === 'ok') {
    if (plan.engine === 'test') {
      const report = await readJson<PlaywrightReport>(path.join(jobDir, REPORT_FILE));
      verdict = report
        ? verdictOfReport(report, jobDir)
        : {
            passed: false,
            errors: [
              {
                name: 'Error',
                message: 'Playwright Test wrote no report; see the log',
                stack: null,
                file: null,
                line: null,
                column: null,
              },
            ],
            attachments: [],
            timedOut: false,
          };
    } else {
      const result = (await readJson<HarnessResult>(path.join(outDir, 'result.json'))) ?? {
        ok: false,
        error: { message: 'the script left no result' },
      };
      if (result.agentError) agentFault = result.agentError;
      verdict = verdictOfScript(result, jobDir);
    }
  } else {
    const d = describeStep(outcome);
    if (d.agentFault) agentFault = d.error;
    verdict = {
      passed: false,
      errors: [
        {
          name: outcome.kind === 'timeout' ? 'TimeoutError' : 'Error',
          message: d.error,
          stack: null,
          file: null,
          line: null,
          column: null,
        },
      ],
      attachments: [],
      timedOut: outcome.kind === 'timeout',
    };
  }

  const pages: BrowserPageVisit[] = [];
  for (const f of await listFiles(outDir))
    if (/pages-\d+\.json$/.test(f)) pages.push(...((await readJson<BrowserPageVisit[]>(f)) ?? []));

  const collected = await collectArtifacts(jobDir, plan.engine, scrubber, ctx);
  const { lines } = sandbox.output();
  const jobLog: BrowserLogLine[] = lines.map((l) => ({
    time: Date.parse(l.time),
    level: l.stream === 'stderr' ? 'ERROR' : 'INFO',
    msg: relativize(stripAnsi(l.msg), jobDir),
  }));
  const errors = verdict.errors;
  const common = {
    errors,
    startTime: plan.startedAt.getTime(),
    endTime,
    runtimeVersion: plan.runtimeId,
    jobLog,
    jobAssets: collected.names,
    screenshots: collected.screenshots,
    playwrightTestTraces: collected.traces,
    ...(collected.report ? { playwrightTestJsonReportFile: collected.report } : {}),
  };
  const traceSummary = {
    consoleErrors: pages.reduce((n, p) => n + p.consoleErrors.filter((e) => e.type === 'console').length, 0),
    networkErrors: pages.reduce((n, p) => n + p.failedRequests.length, 0),
    documentErrors: pages.reduce((n, p) => n + p.consoleErrors.filter((e) => e.type === 'pageerror').length, 0),
    userScriptErrors: errors.length,
  };
  const details =
    check.checkType === 'BROWSER'
      ? {
          browserCheckResult: {
            type: plan.engine === 'test' ? 'PLAYWRIGHT_TEST' : 'PLAYWRIGHT_SCRIPT',
            traceSummary,
            pages,
            playwrightTestVideos: collected.videos,
            ...common,
          } satisfies BrowserCheckResult,
        }
      : { multiStepCheckResult: { ...common, ...(pages.length > 0 ? { pages } : {}) } };
  const first = errors[0];
  const outcomeOut: CheckOutcome = {
    startedAt: plan.startedAt.toISOString(),
    stoppedAt: new Date(endTime).toISOString(),
    responseTime,
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
    details: { ...details, ...collected.details },
  };
  return scrubber.scrubDeep(outcomeOut);
}

interface Collected {
  names: string[];
  screenshots: string[];
  videos: string[];
  traces: string[];
  report: string | null;
  details: { artifacts?: ArtifactRef[]; artifactNotes?: ArtifactNote[] };
}

/** Scrubs a trace in place; false when it is not a readable zip (cut short), so it must not leave the agent. */
async function traceScrubbed(file: string, scrubber: Scrubber): Promise<boolean> {
  try {
    await scrubTraceZip(file, scrubber);
    return true;
  } catch {
    return false;
  }
}

/**
 * Screenshots, videos and traces the run left (Playwright's test-results, the harness's folders
 * and images the script saved itself), plus the JSON report, scrubbed and handed to the uploader.
 */
export async function collectArtifacts(
  jobDir: string,
  engine: 'test' | 'script',
  scrubber: Scrubber,
  ctx: BrowserCheckContext,
): Promise<Collected> {
  const files = (await listFiles(jobDir)).filter((f) => kindOf(f) !== null).sort();
  const counters: Record<string, number> = {};
  const out: Collected = { names: [], screenshots: [], videos: [], traces: [], report: null, details: {} };
  const notes: ArtifactNote[] = [];
  const items: Array<{ spec: ArtifactSpec; list: string[] | null }> = [];
  for (const file of files) {
    const k = kindOf(file) as { kind: ArtifactKind; contentType: string };
    if ((await stat(file)).size === 0) continue;
    counters[k.kind] = (counters[k.kind] ?? 0) + 1;
    const ext = path.extname(file).toLowerCase();
    const name = `${k.kind}-${counters[k.kind]}${ext}`;
    if (k.kind === 'trace' && !(await traceScrubbed(file, scrubber))) {
      const note = {
        name,
        kind: k.kind,
        message:
          'not uploaded: the trace is incomplete (the browser or the run ended while Playwright wrote it), so it could not be scrubbed',
      };
      if (ctx.artifacts) ctx.artifacts.note(note);
      else notes.push(note);
      continue;
    }
    const list = k.kind === 'screenshot' ? out.screenshots : k.kind === 'video' ? out.videos : out.traces;
    items.push({ spec: { name, kind: k.kind, path: file, contentType: k.contentType }, list });
  }
  if (engine === 'test') {
    const report = path.join(jobDir, REPORT_FILE);
    try {
      // Text: scrubbed here with the job's secrets (the uploader's own pass knows only the agent's).
      await writeFile(report, scrubber.scrubText(await readFile(report, 'utf8')));
      items.push({
        spec: { name: 'report.json', kind: 'report', path: report, contentType: 'application/json' },
        list: null,
      });
      out.report = 'report.json';
    } catch {
      // no report
    }
  }
  for (const { spec, list } of items) {
    if (!ctx.artifacts) {
      notes.push({
        name: spec.name,
        kind: spec.kind,
        message: 'not uploaded: this agent runs without an artifact uploader',
      });
      continue;
    }
    const added = await ctx.artifacts.add(spec);
    if (!added.ok) continue;
    out.names.push(spec.name);
    list?.push(spec.name);
  }
  // With a collector the daemon puts its references (details.artifacts) into the result.
  out.details = ctx.artifacts ? {} : { artifactNotes: notes };
  return out;
}
