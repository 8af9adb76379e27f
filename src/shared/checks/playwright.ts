/** Playwright check suites (reference: ChecksV1PlaywrightCheck, CheckResultPlaywright; docs/suites.md). */
import { type Static, Type } from 'typebox';
import { checkDefinition } from './common.ts';
import { Nullable } from './schema.ts';

/** What runs a suite's tests: Node.js 22, 24 or 26, or Bun 1.3 (runtimes/suite-engines on the agent). */
export const SUITE_ENGINES = ['node22', 'node24', 'node26', 'bun1.3'] as const;
export type SuiteEngine = (typeof SUITE_ENGINES)[number];
export const DEFAULT_SUITE_ENGINE: SuiteEngine = 'node24';
/** The reference's limit for a suite run: 60 minutes. */
export const DEFAULT_SUITE_GLOBAL_TIMEOUT_MS = 3_600_000;

export const PlaywrightCheckDefinition = checkDefinition('PLAYWRIGHT', {
  /** The project archive; the agent downloads it from the service by its SHA-256 (docs/suites.md). */
  codeBundle: Type.Object({ sha256: Type.String(), size: Type.Number(), format: Type.Enum(['tar.gz', 'zip']) }),
  engine: Type.Enum(SUITE_ENGINES),
  /** The folder inside the archive with package.json and playwright.config; null is the root. */
  workingDir: Nullable(Type.String()),
  /** Arguments after `playwright test` in the check's testCommand (plain words, no shell). */
  testArgs: Type.Array(Type.String()),
  /** The package manager's arguments from the check's installCommand; null installs from the lockfile. */
  installArgs: Nullable(Type.Array(Type.String())),
  /** Install and tests together must finish within this; the result says when it was reached. */
  globalTimeoutMs: Type.Number(),
  /** A passing run slower than this (ms) is degraded; null: only flaky tests make it degraded. */
  degradedResponseTime: Nullable(Type.Number()),
  /** Started as a test session (POST /v1/checks/playwright/{id}/trigger): the suite sees CI=true. */
  testSession: Type.Boolean(),
});
export type PlaywrightCheckDefinition = Static<typeof PlaywrightCheckDefinition>;

/** One test of a suite run, from Playwright's JSON report. */
export const PlaywrightTestResult = Type.Object({
  title: Type.String(),
  /** Describe blocks and title, file first. */
  titlePath: Type.Array(Type.String()),
  file: Type.String(),
  line: Nullable(Type.Number()),
  projectName: Type.String(),
  /** The last attempt's status: passed, failed, timedOut, skipped or interrupted. */
  status: Type.String(),
  /** Playwright's verdict over all attempts: expected, unexpected, flaky or skipped. */
  outcome: Type.String(),
  /** Milliseconds over all attempts. */
  duration: Type.Number(),
  /** Attempts after the first. */
  retries: Type.Number(),
  /** The first error of the last failing attempt (message, cut), null when none. */
  error: Nullable(Type.String()),
});
export type PlaywrightTestResult = Static<typeof PlaywrightTestResult>;

export const SUITE_RUN_STATUSES = ['passed', 'failed', 'setup-error', 'timed-out', 'cancelled'] as const;
export type SuiteRunStatus = (typeof SUITE_RUN_STATUSES)[number];

/**
 * `playwrightCheckResult` of a check result: the reference's CheckResultPlaywright fields (errors,
 * jobLog, jobAssets, traces, videos, report file) and what the agent adds (status, tests, summary).
 * It travels in RunResult.details.playwrightCheckResult; GET /v1/check-results shows it top-level.
 */
export const PlaywrightCheckResult = Type.Object({
  status: Type.Enum(SUITE_RUN_STATUSES),
  /** Passed, but slower than degradedResponseTime or with flaky tests; `degradedReasons` says which. */
  degraded: Type.Boolean(),
  degradedReasons: Type.Array(Type.String()),
  engine: Type.Enum(SUITE_ENGINES),
  engineVersion: Nullable(Type.String()),
  packageManager: Nullable(Type.String()),
  playwrightVersion: Nullable(Type.String()),
  testSession: Type.Boolean(),
  globalTimeoutMs: Type.Number(),
  globalTimeoutReached: Type.Boolean(),
  dependencyCache: Type.Enum(['hit', 'miss', 'off']),
  timings: Type.Object({ unpackMs: Type.Number(), installMs: Type.Number(), testMs: Type.Number() }),
  summary: Type.Object({
    total: Type.Number(),
    passed: Type.Number(),
    failed: Type.Number(),
    flaky: Type.Number(),
    skipped: Type.Number(),
    interrupted: Type.Number(),
    timedOut: Type.Number(),
  }),
  tests: Type.Array(PlaywrightTestResult),
  /** Setup errors and failed tests, one object each: {phase, message} or {test, message}. */
  errors: Type.Array(Type.Record(Type.String(), Type.Unknown())),
  /** The user-visible log: install and test output, and the agent's notes. */
  jobLog: Type.Array(
    Type.Object({ time: Type.String(), phase: Type.String(), stream: Type.String(), msg: Type.String() }),
  ),
  /** Names of the run's artifacts (details.artifacts has their kind, size and digest). */
  jobAssets: Type.Array(Type.String()),
  playwrightTraceFiles: Type.Array(Type.Object({ name: Type.String(), filename: Type.String() })),
  playwrightTestVideos: Type.Array(Type.String()),
  playwrightTestTraces: Type.Array(Type.String()),
  /** Artifact name of the JSON report, null when Playwright wrote none. */
  playwrightTestJsonReportFile: Nullable(Type.String()),
  /** Artifact name of the zipped HTML report, null when none. */
  playwrightHtmlReportFile: Nullable(Type.String()),
});
export type PlaywrightCheckResult = Static<typeof PlaywrightCheckResult>;
