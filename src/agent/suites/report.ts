/**
 * Reads Playwright's JSON report (the `json` reporter's file) into per-test results: suites nest
 * (files, describe blocks), each spec has one test per project, each test one result per attempt.
 * A report that is missing or unreadable is `undefined`: the caller treats that as a setup error.
 */
import { readFile } from 'node:fs/promises';
import type { PlaywrightTestResult } from '../../shared/checks/types.ts';

interface JsonError {
  message?: string;
  stack?: string;
}
interface JsonAttachment {
  name?: string;
  contentType?: string;
  path?: string;
}
interface JsonResult {
  status?: string;
  duration?: number;
  retry?: number;
  errors?: JsonError[];
  error?: JsonError;
  attachments?: JsonAttachment[];
}
interface JsonTest {
  projectName?: string;
  expectedStatus?: string;
  status?: string;
  results?: JsonResult[];
}
interface JsonSpec {
  title?: string;
  file?: string;
  line?: number;
  tests?: JsonTest[];
}
interface JsonSuite {
  title?: string;
  file?: string;
  specs?: JsonSpec[];
  suites?: JsonSuite[];
}
interface JsonReport {
  config?: { version?: string };
  suites?: JsonSuite[];
  errors?: JsonError[];
  stats?: { duration?: number; expected?: number; unexpected?: number; flaky?: number; skipped?: number };
}

export interface ParsedReport {
  playwrightVersion: string | null;
  tests: PlaywrightTestResult[];
  /** Errors outside any test (a broken config, a test file that does not compile, globalSetup). */
  globalErrors: string[];
  /** Files Playwright attached to results (traces, videos, screenshots), absolute paths. */
  attachments: Array<{ name: string; contentType: string; path: string }>;
}

const ERROR_MAX = 4_000;
// biome-ignore lint/suspicious/noControlCharactersInRegex: ANSI escape sequences start with ESC.
const ANSI = /\u001b\[[0-9;?]*[A-Za-z]/g;

export function errorText(e: JsonError | undefined): string | null {
  if (!e) return null;
  const text = (e.message ?? e.stack ?? '').replace(ANSI, '').trim();
  if (text === '') return null;
  return text.length > ERROR_MAX ? `${text.slice(0, ERROR_MAX)} [cut]` : text;
}

function walk(suite: JsonSuite, parents: string[], out: ParsedReport): void {
  // A file's suite has the file as its title; describe blocks add theirs.
  const path = suite.title ? [...parents, suite.title] : parents;
  for (const spec of suite.specs ?? []) {
    for (const test of spec.tests ?? []) {
      const results = test.results ?? [];
      const last = results.at(-1);
      const failing = [...results].reverse().find((r) => (r.errors?.length ?? 0) > 0 || r.error);
      for (const r of results) {
        for (const a of r.attachments ?? []) {
          if (a.path)
            out.attachments.push({
              name: a.name ?? 'attachment',
              contentType: a.contentType ?? 'application/octet-stream',
              path: a.path,
            });
        }
      }
      out.tests.push({
        title: spec.title ?? '',
        titlePath: [...path, spec.title ?? ''],
        file: spec.file ?? suite.file ?? '',
        line: typeof spec.line === 'number' ? spec.line : null,
        projectName: test.projectName ?? '',
        // A test that never started (interrupted before its turn) has no result.
        status: last?.status ?? (test.status === 'skipped' ? 'skipped' : 'interrupted'),
        outcome: test.status ?? 'unexpected',
        duration: results.reduce((n, r) => n + (r.duration ?? 0), 0),
        retries: Math.max(0, results.length - 1),
        error: failing ? errorText(failing.errors?.[0] ?? failing.error) : null,
      });
    }
  }
  for (const child of suite.suites ?? []) walk(child, path, out);
}

export function parseReport(report: JsonReport): ParsedReport {
  const out: ParsedReport = {
    playwrightVersion: typeof report.config?.version === 'string' ? report.config.version : null,
    tests: [],
    globalErrors: (report.errors ?? []).map(errorText).filter((e): e is string => e !== null),
    attachments: [],
  };
  for (const s of report.suites ?? []) walk(s, [], out);
  return out;
}

export async function readReport(file: string): Promise<ParsedReport | undefined> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch {
    return undefined;
  }
  try {
    return parseReport(JSON.parse(text) as JsonReport);
  } catch {
    return undefined;
  }
}

export function summarise(tests: readonly PlaywrightTestResult[]) {
  const count = (f: (t: PlaywrightTestResult) => boolean) => tests.filter(f).length;
  return {
    total: tests.length,
    passed: count((t) => t.outcome === 'expected' && t.status !== 'skipped'),
    failed: count((t) => t.outcome === 'unexpected' && t.status !== 'interrupted'),
    flaky: count((t) => t.outcome === 'flaky'),
    skipped: count((t) => t.status === 'skipped'),
    interrupted: count((t) => t.status === 'interrupted'),
    timedOut: count((t) => t.status === 'timedOut'),
  };
}
