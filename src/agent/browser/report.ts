/**
 * Reads how a run went from what the sandbox left in the job folder: Playwright's JSON report for
 * `@playwright/test` scripts, the harness's result.json for plain scripts. Errors are mapped to
 * the user's files: `script.js` (the check's script) or a dependency's path, with line and column.
 */
import path from 'node:path';
import type { BrowserScriptError } from '../../shared/checks/types.ts';

// biome-ignore lint/suspicious/noControlCharactersInRegex: ANSI colour codes are what this removes.
const ANSI = /\u001b\[[0-9;]*[A-Za-z]/g;
export const stripAnsi = (s: string): string => s.replace(ANSI, '');

const MAX_MESSAGE = 4000;

/** Job-folder paths in a message or stack become relative (`script.js:5:3`), hiding the agent's layout. */
export function relativize(text: string, jobDir: string): string {
  return text.split(`${jobDir}/`).join('').split(`file://${jobDir}/`).join('');
}

/** The first stack frame in one of the user's files (not the runtime's libraries). */
export function locate(stack: string, jobDir: string): { file: string; line: number; column: number } | null {
  const re = new RegExp(`${jobDir.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}/([^:)\\s]+):(\\d+):(\\d+)`, 'g');
  for (const m of stack.matchAll(re)) {
    const file = m[1] as string;
    if (file.startsWith('node_modules/') || file.startsWith('outpost-') || file.startsWith('.outpost/')) continue;
    return { file, line: Number(m[2]), column: Number(m[3]) };
  }
  return null;
}

/** An error as Playwright's JSON report gives it. */
interface ReportError {
  message?: string;
  stack?: string;
  location?: { file?: string; line?: number; column?: number };
  snippet?: string;
}

/** An error of the report or the harness as the user sees it: their file, line and column, the agent's paths hidden. */
export function scriptError(
  e: Omit<ReportError, 'stack'> & { name?: string; stack?: string | null },
  jobDir: string,
): BrowserScriptError {
  const message = stripAnsi(String(e.message ?? 'the script failed'));
  // Frames outside the job folder (the harness, the runtime's libraries) say nothing to the user
  // and would show where the agent is installed.
  const stack = e.stack
    ? stripAnsi(e.stack)
        .split('\n')
        .filter((l) => !/^\s+at /.test(l) || (l.includes(`${jobDir}/`) && !l.includes(`${jobDir}/node_modules/`)))
        .join('\n')
    : null;
  let where = e.location?.file
    ? { file: path.relative(jobDir, e.location.file), line: e.location.line ?? 0, column: e.location.column ?? 0 }
    : null;
  if (
    where &&
    (where.file.startsWith('..') || where.file.startsWith('node_modules') || where.file.startsWith('outpost-'))
  )
    where = null;
  where ??= locate(stack ?? message, jobDir);
  const firstLine = message.split('\n')[0] ?? '';
  const name = e.name ?? /^(\w*Error):/.exec(firstLine)?.[1] ?? 'Error';
  return {
    name,
    message: relativize(message, jobDir).slice(0, MAX_MESSAGE),
    stack: stack ? relativize(stack, jobDir).slice(0, MAX_MESSAGE) : null,
    file: where?.file ?? null,
    line: where?.line ?? null,
    column: where?.column ?? null,
    ...(e.snippet ? { snippet: stripAnsi(e.snippet).slice(0, 2000) } : {}),
  };
}

interface ReportResult {
  status?: string;
  errors?: ReportError[];
  error?: ReportError;
  attachments?: Array<{ name?: string; contentType?: string; path?: string }>;
}
interface ReportTest {
  status?: string;
  results?: ReportResult[];
}
interface ReportSuite {
  specs?: Array<{ title?: string; tests?: ReportTest[] }>;
  suites?: ReportSuite[];
}
export interface PlaywrightReport {
  suites?: ReportSuite[];
  errors?: ReportError[];
  stats?: { expected?: number; unexpected?: number; flaky?: number; skipped?: number };
}

export interface RunVerdict {
  passed: boolean;
  errors: BrowserScriptError[];
  /** Files Playwright attached to results (screenshots, videos, traces), absolute paths. */
  attachments: Array<{ name: string; contentType: string; path: string }>;
  /** The run ended at the script's time limit. */
  timedOut: boolean;
}

/** An error that points at none of the user's files: the agent's or the sandbox's own words. */
export function bareError(message: string, name = 'Error'): BrowserScriptError {
  return { name, message, stack: null, file: null, line: null, column: null };
}

/** The verdict of a run that failed with one such error. */
export function failedVerdict(error: BrowserScriptError, timedOut = false): RunVerdict {
  return { passed: false, errors: [error], attachments: [], timedOut };
}

function* tests(suites: ReportSuite[] | undefined): Generator<{ title: string; test: ReportTest }> {
  for (const s of suites ?? []) {
    for (const spec of s.specs ?? []) for (const test of spec.tests ?? []) yield { title: spec.title ?? '', test };
    yield* tests(s.suites);
  }
}

/** The verdict of a `@playwright/test` run from its JSON report. */
export function verdictOfReport(report: PlaywrightReport, jobDir: string): RunVerdict {
  const errors: BrowserScriptError[] = [];
  const attachments: RunVerdict['attachments'] = [];
  let ran = 0;
  let failed = 0;
  let timedOut = false;
  for (const { title, test } of tests(report.suites)) {
    if (test.status !== 'skipped') ran += 1;
    const bad = test.status === 'unexpected';
    if (bad) failed += 1;
    for (const r of test.results ?? []) {
      if (r.status === 'timedOut') timedOut = true;
      for (const a of r.attachments ?? [])
        if (a.path)
          attachments.push({
            name: a.name ?? 'file',
            contentType: a.contentType ?? 'application/octet-stream',
            path: a.path,
          });
      if (!bad) continue;
      for (const e of r.errors?.length ? r.errors : r.error ? [r.error] : []) {
        errors.push({ ...scriptError(e, jobDir), ...(title ? { test: title } : {}) });
      }
    }
  }
  for (const e of report.errors ?? []) errors.push(scriptError(e, jobDir));
  if (ran === 0 && errors.length === 0) {
    errors.push(bareError('the script defines no tests that ran (no test() call, or every test was skipped)'));
  }
  return { passed: failed === 0 && errors.length === 0, errors, attachments, timedOut };
}

export interface HarnessResult {
  ok?: boolean;
  error?: { name?: string; message?: string; stack?: string | null } | null;
  timedOut?: boolean;
  agentError?: string | null;
}

/** The verdict of a plain script from the harness's result.json. */
export function verdictOfScript(result: HarnessResult, jobDir: string): RunVerdict {
  const errors = result.error ? [scriptError(result.error, jobDir)] : [];
  return {
    passed: result.ok === true && errors.length === 0,
    errors,
    attachments: [],
    timedOut: result.timedOut === true,
  };
}

/** One line for RunResult.error: where and what, e.g. `script.js:7:5: Error: expect(...)...`. */
export function summarize(err: BrowserScriptError): string {
  const where = err.file ? `${err.file}${err.line ? `:${err.line}${err.column ? `:${err.column}` : ''}` : ''}: ` : '';
  const first = err.message.split('\n').find((l) => l.trim() !== '') ?? err.message;
  const msg = first.startsWith(err.name) || first.includes(`${err.name}:`) ? first : `${err.name}: ${first}`;
  return `${where}${msg}${err.test ? ` (test "${err.test}")` : ''}`.slice(0, 1000);
}
