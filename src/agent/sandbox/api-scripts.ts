/**
 * Setup and teardown scripts of API checks, run in one sandbox per job (docs/sandbox.md):
 *
 *   setup (sees and may change `request`) → the HTTP request → teardown (sees and may change
 *   `response`) → assertions on the possibly changed response.
 *
 * As in the reference: `request` has method, url, headers and queryParameters (objects) and body;
 * `response` has status (also as statusCode), statusText, headers, body, timings and timingPhases;
 * both scripts see the check's variables in process.env; their console output is the check's log
 * (`apiCheckResult.jobLog`). A script's own failure (it threw, timed out, used too much memory,
 * ended the process) fails the check with the reason; a sandbox that cannot start is the agent's
 * fault and is reported as an agent error.
 */
import { type ApiCheckDefinition, HTTP_METHODS, type HttpMethod, type KeyValue } from '../../shared/checks/types.ts';
import { runtimeNeededBy } from '../../shared/runtimes.ts';
import { agentErrorOutcome } from '../checks/outcome.ts';
import type { CheckContext, CheckOutcome } from '../checks/runner.ts';
import { RuntimeUnavailableError, SandboxStartError } from './errors.ts';
import type { SandboxPool } from './pool.ts';
import type { SandboxProcess } from './process.ts';
import type { LogLine, StepOutcome } from './types.ts';

/**
 * Each script's wall-clock limit, as in the reference; the whole API check stays within its run limit
 * because the run's signal aborts whatever step is running.
 */
export const SCRIPT_TIMEOUT_MS = 10_000;

/** Runtime-created secrets: values scripts put into process.env under this prefix are scrubbed. */
export const SECRET_ENV_PREFIX = 'OUTPOST_SECRET_';

/** What a setup script sees as `request`. */
export interface ScriptRequest {
  method: string;
  url: string;
  headers: Record<string, string>;
  queryParameters: Record<string, string>;
  body: string;
}

/** What a teardown script sees as `response`. */
export interface ScriptResponse {
  status: number;
  statusCode: number;
  statusText: string;
  headers: Record<string, string>;
  body: string;
  timings: Record<string, number> | null;
  timingPhases: Record<string, number> | null;
}

/** The teardown seam of the API runner: runs after the response, before assertions. */
export type AfterResponse = (response: ScriptResponse) => Promise<{ response: ScriptResponse } | { error: string }>;

/** The plain API runner with the teardown seam (src/agent/checks/api.ts passes itself in). */
export type ApiRun = (
  check: ApiCheckDefinition,
  ctx: CheckContext,
  afterResponse?: AfterResponse,
) => Promise<CheckOutcome>;

export interface ScriptDeps {
  pool: SandboxPool | undefined;
  /** Tests shorten it; production uses SCRIPT_TIMEOUT_MS. */
  scriptTimeoutMs?: number;
  /** Called with each value a script put into process.env.OUTPOST_SECRET_* (for the scrubber). */
  onSecret?: (value: string) => void;
}

const hasCode = (s: string | null | undefined): s is string => typeof s === 'string' && s.trim() !== '';

function toRecord(pairs: KeyValue[] | undefined): Record<string, string> {
  const out: Record<string, string> = {};
  for (const { key, value } of pairs ?? []) out[key] = key in out ? `${out[key]}, ${value}` : value;
  return out;
}

function fromRecord(v: unknown): KeyValue[] | string {
  if (v === null || v === undefined) return [];
  if (typeof v !== 'object' || Array.isArray(v)) return 'must be an object of names to values';
  return Object.entries(v as Record<string, unknown>)
    .filter(([, value]) => value !== undefined && value !== null)
    .map(([key, value]) => ({ key, value: typeof value === 'string' ? value : String(value) }));
}

/** The check with the request as the setup script left it; a string says what is wrong with it. */
export function applyScriptRequest(check: ApiCheckDefinition, r: Record<string, unknown>): ApiCheckDefinition | string {
  const method = typeof r.method === 'string' ? r.method.toUpperCase() : check.request.method;
  if (!(HTTP_METHODS as readonly string[]).includes(method)) {
    return `the setup script set request.method to ${JSON.stringify(r.method)}; use one of ${HTTP_METHODS.join(', ')}`;
  }
  if (typeof r.url !== 'string') return 'the setup script set request.url to something that is not a string';
  const headers = fromRecord(r.headers);
  if (typeof headers === 'string') return `request.headers ${headers}`;
  const queryParameters = fromRecord(r.queryParameters);
  if (typeof queryParameters === 'string') return `request.queryParameters ${queryParameters}`;
  const body =
    r.body === undefined || r.body === null ? '' : typeof r.body === 'string' ? r.body : JSON.stringify(r.body);
  const bodyType = check.request.bodyType === 'NONE' && body !== '' ? 'RAW' : check.request.bodyType;
  return {
    ...check,
    request: { ...check.request, method: method as HttpMethod, url: r.url, headers, queryParameters, body, bodyType },
  };
}

/**
 * The response as the teardown script left it. `status` and `statusCode` are the same number; the
 * one the script changed wins. A string says what is wrong with it.
 */
export function applyScriptResponse(original: ScriptResponse, changed: unknown): ScriptResponse | string {
  if (!changed || typeof changed !== 'object') return 'response is no longer an object';
  const r = changed as Record<string, unknown>;
  const status = r.status !== original.status ? r.status : r.statusCode;
  if (typeof status !== 'number' || !Number.isInteger(status))
    return `response.status must be a whole number, not ${JSON.stringify(status)}`;
  const headers = fromRecord(r.headers);
  if (typeof headers === 'string') return `response.headers ${headers}`;
  const body =
    r.body === undefined || r.body === null ? '' : typeof r.body === 'string' ? r.body : JSON.stringify(r.body);
  return {
    ...original,
    status,
    statusCode: status,
    statusText: typeof r.statusText === 'string' ? r.statusText : original.statusText,
    headers: Object.fromEntries(headers.map((h) => [h.key.toLowerCase(), h.value])),
    body,
  };
}

function describeOutcome(stage: 'setup' | 'teardown', outcome: Exclude<StepOutcome, { kind: 'ok' }>): string {
  const what = stage === 'setup' ? 'Setup script' : 'Teardown script';
  switch (outcome.kind) {
    case 'script-error': {
      const e = outcome.error;
      const where =
        e.line !== null ? ` (${stage}.js line ${e.line}${e.column !== null ? `, column ${e.column}` : ''})` : '';
      return `${what} failed: ${e.name}: ${e.message}${where}`;
    }
    case 'timeout':
      return `${what} timed out: it ran longer than its limit of ${outcome.limitMs} ms and was stopped`;
    case 'memory':
      return `${what} used too much memory and was stopped: ${outcome.detail}`;
    case 'exited':
      return `${what} ended the sandbox process early (${outcome.signal ? `signal ${outcome.signal}` : `exit code ${outcome.code}`}) before it finished`;
    case 'protocol':
      return `${what} broke the sandbox's protocol: ${outcome.detail}`;
    case 'aborted':
      return `${what} was stopped: the run was cancelled or reached its time limit`;
  }
}

/** A check that failed before its request was sent (setup failed, or the runtime is missing). */
function failedBeforeRequest(
  check: ApiCheckDefinition,
  startedAt: Date,
  error: string,
  jobLog: Record<string, unknown> | null,
  hasErrors: boolean,
): CheckOutcome {
  return {
    ...agentErrorOutcome(startedAt, error, { hasFailures: true, hasErrors }),
    apiCheckResult: {
      request: {
        method: check.request.method,
        url: check.request.url,
        data: check.request.body ?? '',
        headers: toRecord(check.request.headers),
        params: toRecord(check.request.queryParameters),
      },
      response: null,
      assertions: [],
      requestError: null,
      jobLog,
      jobAssets: null,
    },
  };
}

/** Splits the sandbox's output into the setup and teardown parts of the log by when each step began. */
function jobLogOf(lines: LogLine[], teardownStartedAt: string | null, truncated: boolean): Record<string, unknown> {
  const setup = teardownStartedAt === null ? lines : lines.filter((l) => l.time < teardownStartedAt);
  const teardown = teardownStartedAt === null ? [] : lines.filter((l) => l.time >= teardownStartedAt);
  return { setup, teardown, ...(truncated ? { truncated: true } : {}) };
}

/**
 * Runs an API check that has a setup and/or teardown script. `run` is the plain API runner; this
 * wraps it with the sandbox around it.
 */
export async function runScriptedApiCheck(
  check: ApiCheckDefinition,
  ctx: CheckContext,
  deps: ScriptDeps,
  run: ApiRun,
): Promise<CheckOutcome> {
  const startedAt = new Date();
  const t0 = performance.now();
  const runtimeId = runtimeNeededBy(check) ?? '';
  const pool = deps.pool;
  const carried = pool?.runtimeIds ?? [];
  if (!pool?.runtime(runtimeId)) {
    return failedBeforeRequest(check, startedAt, new RuntimeUnavailableError(runtimeId, carried).message, null, true);
  }

  let sandbox: SandboxProcess;
  try {
    sandbox = await (pool as SandboxPool).acquire(runtimeId);
  } catch (err) {
    if (err instanceof SandboxStartError) {
      ctx.log.error({ err, runtime: runtimeId }, 'the sandbox could not start: agent error');
      return agentErrorOutcome(startedAt, `agent error: ${err.message}`);
    }
    throw err;
  }

  const env: Record<string, string> = {};
  for (const v of check.environmentVariables ?? []) env[v.key] = v.value;
  const limit = deps.scriptTimeoutMs ?? SCRIPT_TIMEOUT_MS;
  const stepTimeout = (): number => Math.max(1, Math.round(Math.min(limit, ctx.timeoutMs - (performance.now() - t0))));
  const reportSecrets = (secrets: string[]): void => {
    for (const s of secrets) deps.onSecret?.(s);
  };

  let teardownStartedAt: string | null = null;
  let outcome: CheckOutcome | undefined;
  let scriptFailure: string | null = null;
  try {
    let effective = check;
    if (hasCode(check.localSetupScript)) {
      const request: ScriptRequest = {
        method: check.request.method,
        url: check.request.url,
        headers: toRecord(check.request.headers),
        queryParameters: toRecord(check.request.queryParameters),
        body: check.request.body ?? '',
      };
      const step = await sandbox.run(
        { stage: 'setup', filename: 'setup.js', code: check.localSetupScript, env, context: { request } },
        { timeoutMs: stepTimeout(), signal: ctx.signal },
      );
      if (step.kind !== 'ok') {
        scriptFailure = describeOutcome('setup', step);
      } else {
        reportSecrets(step.secrets);
        const changed = applyScriptRequest(check, (step.context.request ?? {}) as Record<string, unknown>);
        if (typeof changed === 'string') scriptFailure = `Setup script failed: ${changed}`;
        else effective = changed;
      }
    }
    if (scriptFailure === null) {
      const teardown = check.localTearDownScript;
      const afterResponse: AfterResponse | undefined = hasCode(teardown)
        ? async (response) => {
            teardownStartedAt = new Date().toISOString();
            const step = await sandbox.run(
              { stage: 'teardown', filename: 'teardown.js', code: teardown, env, context: { response } },
              { timeoutMs: stepTimeout(), signal: ctx.signal },
            );
            if (step.kind !== 'ok') return { error: describeOutcome('teardown', step) };
            reportSecrets(step.secrets);
            const changed = applyScriptResponse(response, step.context.response);
            return typeof changed === 'string'
              ? { error: `Teardown script failed: ${changed}` }
              : { response: changed };
          }
        : undefined;
      const remaining = Math.max(1, ctx.timeoutMs - (performance.now() - t0));
      outcome = await run(effective, { ...ctx, timeoutMs: remaining }, afterResponse);
    }
  } finally {
    // The result waits only for the process to end (so the log is complete); the sweep for
    // leftovers and the folder's removal finish in the background (the pool awaits them on close).
    sandbox.finish();
    sandbox.dispose().catch((err: unknown) => ctx.log.error({ err }, 'could not clean up a sandbox'));
  }
  const { lines, truncated } = sandbox.output();
  const jobLog = jobLogOf(lines, teardownStartedAt, truncated);
  if (outcome === undefined) {
    return failedBeforeRequest(check, startedAt, scriptFailure ?? 'Setup script failed', jobLog, false);
  }
  return {
    ...outcome,
    apiCheckResult: outcome.apiCheckResult ? { ...outcome.apiCheckResult, jobLog } : outcome.apiCheckResult,
  };
}
