/**
 * The API check runner: one HTTP(S) request (plus redirects) over a fresh connection, timed phase by
 * phase, its response checked against the check's assertions and response-time limits.
 *
 * Everything the target does — refuse, reset, stall, send a bad certificate, answer 500, fail an
 * assertion — is a failed outcome with a reason (hasFailures true, hasErrors false). Only a bug in the
 * agent (an error without a code) escapes as a throw, which the daemon reports as an agent error.
 *
 * Helpers: api/request.ts (request and body), api/connect.ts (DNS, TCP, TLS), api/timings.ts,
 * api/tls.ts, api/assertions.ts (the engine), api/errors.ts (words for failures).
 */
import type { ApiCheckDefinition, ApiCheckResult, AssertionResult, TimingPhases } from '../../shared/checks/types.ts';
import type { ApiRunDetails } from '../../shared/protocol.ts';
import { diagnoseNetworkFailure } from '../diagnostics/index.ts';
import { evaluateAssertions } from './api/assertions.ts';
import { failBodyAssertions } from './api/body.ts';
import { CANCELLED, describeRequestError, isTargetError, timeoutMessage } from './api/errors.ts';
import { type ExchangeState, type PreparedRequest, type RawResponse, exchange, prepareRequest } from './api/request.ts';
import { runPhases, runTimings } from './api/timings.ts';
import { type AfterResponse, runScriptedApiCheck } from '../sandbox/api-scripts.ts';
import { runsUserCode } from '../../shared/runtimes.ts';
import { type AbortKind, startRunSignal } from './net/run-signal.ts';
import { finishRun } from './net/verdict.ts';
import type { CheckContext, CheckOutcome, CheckRunner } from './runner.ts';

export { evaluateAssertions } from './api/assertions.ts';
export { RESPONSE_BODY_CAP_BYTES } from './api/body.ts';

function hostOf(url: URL): string {
  const h = url.hostname;
  return h.startsWith('[') && h.endsWith(']') ? h.slice(1, -1) : h;
}

function portOf(url: URL): number {
  return url.port ? Number(url.port) : url.protocol === 'https:' ? 443 : 80;
}

/** Why a response is a failure by its status alone (4xx and 5xx, as the reference has it), else null. */
function errorStatus(response: RawResponse): string | null {
  if (response.status < 400) return null;
  const text = response.statusText ? ` ${response.statusText}` : '';
  return `HTTP ${response.status}${text}: a 4xx or 5xx status fails the check unless it has shouldFail`;
}

/** How far an API run has got; each phase below fills in its part. */
interface ApiRun {
  check: ApiCheckDefinition;
  ctx: CheckContext;
  t0: number;
  prepared: PreparedRequest | null;
  /** The exchange's progress: hops, phase reached, address, redirects, TLS. */
  state: ExchangeState | null;
  response: RawResponse | null;
  requestError: string | null;
  /** The failing error's code (ECONNREFUSED, ...), for the network diagnosis. */
  failureCode: string | null;
  /** Why the run was stopped (its limit, a cancel), or null. */
  abortKind: AbortKind | null;
  /** Why the teardown seam failed the run, else null. */
  scriptError: string | null;
}

interface Timing {
  timingPhases: TimingPhases;
  timings: Record<string, number>;
}

/**
 * Sends the request over a fresh connection (DNS, TCP, TLS, redirects, body) within the run's limit;
 * every failure of the target becomes requestError.
 */
async function sendRequest(r: ApiRun): Promise<void> {
  const { check, ctx } = r;
  const req = check.request;
  // One signal for the run: the context's (cancel, or the daemon's timeout) or our own timer at
  // ctx.timeoutMs, so the runner keeps its time limit even if nobody else enforces it.
  const run = startRunSignal(ctx, r.t0);
  try {
    r.prepared = prepareRequest(req);
    r.state = {
      hops: [],
      phase: 'setup',
      url: r.prepared.url,
      redirects: [],
      address: null,
      resolvedVia: null,
      tls: null,
    };
    if (!run.signal.aborted) {
      r.response = await exchange(
        r.prepared,
        {
          followRedirects: req.followRedirects === true,
          skipSSL: req.skipSSL === true,
          ipFamily: req.ipFamily === 'IPv6' ? 'IPv6' : 'IPv4',
          useOsDnsResolver: ctx.useOsDnsResolver,
          signal: run.signal,
          tls: check.tls,
          maxResponseBytes: req.maxResponseBytes ?? null,
        },
        r.state,
      );
      r.requestError = r.response.failure;
    }
  } catch (err) {
    if (run.abortKind === null && !isTargetError(err)) throw err;
    r.failureCode = typeof (err as { code?: unknown })?.code === 'string' ? (err as { code: string }).code : null;
    if (run.abortKind === null) r.requestError = describeFailure(r, err);
  } finally {
    run.dispose();
  }
  r.abortKind = run.abortKind;
  if (r.abortKind !== null && r.response === null) {
    r.requestError = r.abortKind === 'timeout' ? timeoutMessage(ctx.timeoutMs, r.state?.phase ?? 'setup') : CANCELLED;
  }
}

function describeFailure(r: ApiRun, err: unknown): string {
  const url = r.state?.url;
  return describeRequestError(err, {
    host: url ? hostOf(url) : r.check.request.url,
    port: url ? portOf(url) : 0,
    address: r.state?.address?.address ?? null,
    phase: r.state?.phase ?? 'setup',
  });
}

/** Where the time went; without a response, the phase the run stopped in carries the time up to the stop. */
function measureTimings(r: ApiRun, tEnd: number): Timing {
  const hops = r.state?.hops ?? [];
  return {
    timingPhases: runPhases(r.t0, hops, tEnd, r.response ? null : (r.state?.phase ?? null)),
    timings: runTimings(r.t0, hops.at(-1)),
  };
}

/**
 * The teardown seam (src/agent/sandbox/api-scripts.ts): it sees the response before the assertions
 * and may change it, or fail the run with a reason.
 */
async function applyAfterResponse(r: ApiRun, afterResponse: AfterResponse, t: Timing): Promise<void> {
  const response = r.response;
  if (!response) return;
  const seen = await afterResponse({
    status: response.status,
    statusCode: response.status,
    statusText: response.statusText,
    headers: response.headers,
    body: response.body,
    timings: t.timings,
    timingPhases: { ...t.timingPhases },
  });
  if ('error' in seen) r.scriptError = seen.error;
  else
    r.response = {
      ...response,
      status: seen.response.status,
      statusText: seen.response.statusText,
      headers: seen.response.headers,
      body: seen.response.body,
    };
}

/**
 * Assertions run only on a response. A 4xx/5xx status fails the run on its own unless the check has
 * shouldFail (net/verdict.ts), as with the reference.
 */
function assertResponse(r: ApiRun, responseTime: number): AssertionResult[] {
  const response = r.response;
  if (!response) return [];
  const results = evaluateAssertions(r.check.request.assertions ?? [], {
    status: response.status,
    headers: response.headers,
    body: response.body,
    responseTime,
    httpVersion: response.httpVersion,
    tls: r.state?.tls ?? null,
  });
  return failBodyAssertions(results, response.bodyError);
}

/** The result as the reference shapes it: the request sent, the response, the assertions. */
function recordResult(r: ApiRun, t: Timing, assertions: AssertionResult[]): ApiCheckResult {
  const { response } = r;
  const req = r.check.request;
  const tls = r.state?.tls ?? null;
  return {
    request: r.prepared?.recorded ?? {
      method: req.method,
      url: req.url,
      data: req.body ?? '',
      headers: {},
      params: {},
    },
    response: response
      ? {
          status: response.status,
          statusText: response.statusText,
          body: response.body,
          bodyTruncated: response.bodyTruncated,
          httpVersion: response.httpVersion,
          ...(response.bodyError ? { bodyError: response.bodyError } : {}),
          headers: response.headers,
          timings: t.timings,
          timingPhases: t.timingPhases,
          ...(tls ? { tls } : {}),
        }
      : null,
    assertions,
    requestError: r.requestError,
    jobLog: null,
    jobAssets: null,
  };
}

/** Where the request went and how far it got, beside the result. */
function recordDetails(r: ApiRun, t: Timing): ApiRunDetails {
  const { state, response } = r;
  const details: ApiRunDetails = {
    finalUrl: state?.url.toString() ?? null,
    redirects: state?.redirects ?? [],
    remoteAddress: state?.address?.address ?? null,
    ipFamily: state?.address ? (state.address.family === 6 ? 'IPv6' : 'IPv4') : null,
    resolvedVia: state?.resolvedVia ?? null,
    tls: state?.tls ?? null,
  };
  // Without a response there is no response.timingPhases; how far the request got is still worth
  // seeing (e.g. a DNS that took seconds before failing).
  if (!response) return { ...details, timingPhases: t.timingPhases, timings: t.timings };
  return {
    ...details,
    bodyBytes: response.bodyBytes,
    bodyComplete: response.bodyComplete,
    maxResponseBytes: r.check.request.maxResponseBytes ?? null,
  };
}

/**
 * A failure on the network gets a traceroute (and a packet capture where allowed) in details; the
 * verdict does not depend on it, and only network failures pay for this (src/agent/diagnostics/).
 */
async function diagnose(r: ApiRun): Promise<ApiRunDetails> {
  const { state } = r;
  if (r.response !== null || r.abortKind === 'cancelled' || !state?.address) return {};
  const diagnostics = await diagnoseNetworkFailure(
    {
      code: r.failureCode,
      timedOut: r.abortKind === 'timeout',
      phase: state.phase,
      hostname: hostOf(state.url),
      address: state.address.address,
      family: state.address.family,
      port: portOf(state.url),
    },
    { signal: r.ctx.signal },
  );
  return diagnostics ? { traceroute: diagnostics.traceroute, pcap: diagnostics.pcap } : {};
}

/** One API check without scripts; `afterResponse` is the teardown seam (see applyAfterResponse). */
async function runApiCheck(
  check: ApiCheckDefinition,
  ctx: CheckContext,
  afterResponse?: AfterResponse,
): Promise<CheckOutcome> {
  const startedAt = new Date();
  const r: ApiRun = {
    check,
    ctx,
    t0: performance.now(),
    prepared: null,
    state: null,
    response: null,
    requestError: null,
    failureCode: null,
    abortKind: null,
    scriptError: null,
  };
  await sendRequest(r);
  const timing = measureTimings(r, performance.now());
  const stoppedAt = new Date();
  const responseTime = timing.timingPhases.total;
  if (afterResponse) await applyAfterResponse(r, afterResponse, timing);
  const assertions = assertResponse(r, responseTime);
  const details = { ...recordDetails(r, timing), ...(await diagnose(r)) };
  return finishRun({
    check,
    ctx,
    label: 'api',
    startedAt,
    stoppedAt,
    measured: {
      requestError: r.requestError ?? r.scriptError,
      errorAnswer: r.response ? errorStatus(r.response) : null,
      answered: r.response !== null,
      assertions,
      responseTime,
      shouldFailExcuses: 'errorAnswer',
    },
    logged: { requestError: r.requestError, status: r.response?.status ?? null },
    details: () => details,
    apiCheckResult: recordResult(r, timing, assertions),
  });
}

/** Runs API checks (HTTP/HTTPS requests with assertions); registered in ./index.ts. */
export const apiCheckRunner: CheckRunner<ApiCheckDefinition> = {
  checkType: 'API',
  // A check with setup or teardown code runs them in a sandbox around the request (src/agent/sandbox/).
  run: (check, ctx) =>
    runsUserCode(check)
      ? runScriptedApiCheck(check, ctx, { pool: ctx.sandboxes, onSecret: ctx.onSecret }, runApiCheck)
      : runApiCheck(check, ctx),
};
