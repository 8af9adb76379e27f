/**
 * Browser and multistep checks (reference: ChecksV1BrowserCheckCreate, ChecksV1MultiStepCheckCreate,
 * CheckResultBrowser, MultiStepResultBrowser): their definitions in a job and their results.
 */
import { type Static, Type } from 'typebox';
import { checkDefinition } from './common.ts';
import { Nullable } from './schema.ts';

/** A file beside the script (the reference's ChecksV1Dependency): `path` is relative to the script. */
export const ScriptDependency = Type.Object({ path: Type.String(), content: Type.String() });
export type ScriptDependency = Static<typeof ScriptDependency>;

const scriptProperties = { script: Type.String(), dependencies: Type.Array(ScriptDependency) };

/**
 * A browser check: a Playwright script, either a `@playwright/test` spec (`test(...)` calls) or a
 * plain script that gets `page`, `context` and `browser` in scope (docs/checks.md).
 */
export const BrowserCheckDefinition = checkDefinition('BROWSER', scriptProperties);
export type BrowserCheckDefinition = Static<typeof BrowserCheckDefinition>;

/** A multistep check: a `@playwright/test` spec whose steps use `request` (and optionally `page`). */
export const MultiStepCheckDefinition = checkDefinition('MULTI_STEP', scriptProperties);
export type MultiStepCheckDefinition = Static<typeof MultiStepCheckDefinition>;

/** One page the script visited, as the agent observed it (the reference's free-form `pages` items). */
export const BrowserPageVisit = Type.Object({
  url: Type.String(),
  title: Nullable(Type.String()),
  /** console.error messages and uncaught page errors. */
  consoleErrors: Type.Array(
    Type.Object({
      type: Type.Enum(['console', 'pageerror']),
      text: Type.String(),
      location: Type.Optional(Type.String()),
    }),
  ),
  /** Requests that failed on the network, and responses with status 400 or above. */
  failedRequests: Type.Array(
    Type.Object({
      url: Type.String(),
      method: Type.String(),
      status: Nullable(Type.Number()),
      failure: Nullable(Type.String()),
      resourceType: Type.String(),
    }),
  ),
});
export type BrowserPageVisit = Static<typeof BrowserPageVisit>;

/** A failure of the script, with where in the user's script it happened (line and column, 1-based). */
export const BrowserScriptError = Type.Object({
  name: Type.String(),
  message: Type.String(),
  stack: Nullable(Type.String()),
  /** The file the error points at: `script.js` for the check's script, else the dependency's path. */
  file: Nullable(Type.String()),
  line: Nullable(Type.Number()),
  column: Nullable(Type.Number()),
  /** The failing line with its neighbours, as Playwright shows it. */
  snippet: Type.Optional(Nullable(Type.String())),
  /** The test that failed, for `@playwright/test` scripts. */
  test: Type.Optional(Type.String()),
});
export type BrowserScriptError = Static<typeof BrowserScriptError>;

/** One line of the check's log. */
export const BrowserLogLine = Type.Object({
  time: Type.Number(),
  level: Type.Enum(['INFO', 'ERROR']),
  msg: Type.String(),
});
export type BrowserLogLine = Static<typeof BrowserLogLine>;

/** What browser and multistep results both carry. */
const scriptRunProperties = {
  errors: Type.Array(BrowserScriptError),
  /** Epoch milliseconds. */
  startTime: Type.Number(),
  endTime: Type.Number(),
  runtimeVersion: Type.String(),
  jobLog: Type.Array(BrowserLogLine),
  /** Names of the run's artifacts (details.artifacts has their kind, size and digest). */
  jobAssets: Type.Array(Type.String()),
  screenshots: Type.Array(Type.String()),
  playwrightTestTraces: Type.Array(Type.String()),
  playwrightTestJsonReportFile: Type.Optional(Type.String()),
};

/** `browserCheckResult` (CheckResultBrowser) and, without pages and videos, `multiStepCheckResult`. */
export const BrowserCheckResult = Type.Object({
  type: Type.Enum(['PLAYWRIGHT_TEST', 'PLAYWRIGHT_SCRIPT']),
  /** Counts of what went wrong in the pages (the reference's traceSummary). */
  traceSummary: Type.Object({
    consoleErrors: Type.Number(),
    networkErrors: Type.Number(),
    documentErrors: Type.Number(),
    userScriptErrors: Type.Number(),
  }),
  pages: Type.Array(BrowserPageVisit),
  playwrightTestVideos: Type.Array(Type.String()),
  ...scriptRunProperties,
});
export type BrowserCheckResult = Static<typeof BrowserCheckResult>;

export const MultiStepCheckResult = Type.Object({
  ...scriptRunProperties,
  pages: Type.Optional(Type.Array(BrowserPageVisit)),
});
export type MultiStepCheckResult = Static<typeof MultiStepCheckResult>;
