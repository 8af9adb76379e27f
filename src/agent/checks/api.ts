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
import type { ApiCheckDefinition, ApiCheckResult, AssertionResult } from '../../shared/checks/types.ts';
import { diagnoseNetworkFailure } from '../diagnostics/index.ts';
import { evaluateAssertions } from './api/assertions.ts';
import { failBodyAssertions } from './api/body.ts';
import { CANCELLED, describeRequestError, isTargetError, timeoutMessage } from './api/errors.ts';
import { type ExchangeState, type PreparedRequest, type RawResponse, exchange, prepareRequest } from './api/request.ts';
import { runPhases, runTimings } from './api/timings.ts';
import { type AfterResponse, runScriptedApiCheck } from '../sandbox/api-scripts.ts';
import { runsUserCode } from '../../shared/runtimes.ts';
import { startRunSignal } from './net/run-signal.ts';
import { decideVerdict, verdictSettings } from './net/verdict.ts';
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

const round = (n: number): number => Math.round(n * 1000) / 1000;

/** Why a response is a failure by its status alone (4xx and 5xx, as the reference has it), else null. */
function errorStatus(response: RawResponse): string | null {
  if (response.status < 400) return null;
  const text = response.statusText ? ` ${response.statusText}` : '';
  return `HTTP ${response.status}${text}: a 4xx or 5xx status fails the check unless it has shouldFail`;
}

/**
 * One API check without scripts. `afterResponse` is the teardown seam (src/agent/sandbox/api-scripts.ts):
 * it sees the response before the assertions and may change it, or fail the run with a reason.
 */
async function runApiCheck(
  check: ApiCheckDefinition,
  ctx: CheckContext,
  afterResponse?: AfterResponse,
): Promise<CheckOutcome> {
  const startedAt = new Date();
  const t0 = performance.now();
  const req = check.request;

  // One signal for the run: the context's (cancel, or the daemon's timeout) or our own timer at
  // ctx.timeoutMs, so the runner keeps its time limit even if nobody else enforces it.
  const run = startRunSignal(ctx, t0);

  let prepared: PreparedRequest | null = null;
  let response: RawResponse | null = null;
  let requestError: string | null = null;
  let state: ExchangeState | null = null;
  let failureCode: string | null = null;
  try {
    prepared = prepareRequest(req);
    state = {
      hops: [],
      phase: 'setup',
      url: prepared.url,
      redirects: [],
      address: null,
      resolvedVia: null,
      tls: null,
    };
    if (!run.signal.aborted) {
      response = await exchange(
        prepared,
        {
          followRedirects: req.followRedirects === true,
          skipSSL: req.skipSSL === true,
          ipFamily: req.ipFamily === 'IPv6' ? 'IPv6' : 'IPv4',
          useOsDnsResolver: ctx.useOsDnsResolver,
          signal: run.signal,
          tls: check.tls,
          maxResponseBytes: req.maxResponseBytes ?? null,
        },
        state,
      );
      requestError = response.failure;
    }
  } catch (err) {
    if (run.abortKind === null && !isTargetError(err)) throw err;
    failureCode = typeof (err as { code?: unknown })?.code === 'string' ? (err as { code: string }).code : null;
    if (run.abortKind === null) {
      const url = state?.url;
      requestError = describeRequestError(err, {
        host: url ? hostOf(url) : req.url,
        port: url ? portOf(url) : 0,
        address: state?.address?.address ?? null,
        phase: state?.phase ?? 'setup',
      });
    }
  } finally {
    run.dispose();
  }
  if (run.abortKind !== null && response === null) {
    requestError = run.abortKind === 'timeout' ? timeoutMessage(ctx.timeoutMs, state?.phase ?? 'setup') : CANCELLED;
  }
  const tEnd = performance.now();
  const stoppedAt = new Date();

  const hops = state?.hops ?? [];
  // Without a response, the phase the run stopped in carries the time up to the stop.
  const timingPhases = runPhases(t0, hops, tEnd, response ? null : (state?.phase ?? null));
  const timings = runTimings(t0, hops.at(-1));
  const responseTime = timingPhases.total;

  let scriptError: string | null = null;
  if (response && afterResponse) {
    const seen = await afterResponse({
      status: response.status,
      statusCode: response.status,
      statusText: response.statusText,
      headers: response.headers,
      body: response.body,
      timings,
      timingPhases: { ...timingPhases },
    });
    if ('error' in seen) scriptError = seen.error;
    else
      response = {
        ...response,
        status: seen.response.status,
        statusText: seen.response.statusText,
        headers: seen.response.headers,
        body: seen.response.body,
      };
  }

  // Assertions run only on a response. A 4xx/5xx status fails the run on its own unless the check
  // has shouldFail (net/verdict.ts), as with the reference.
  const tls = state?.tls ?? null;
  const assertions: AssertionResult[] = response
    ? failBodyAssertions(
        evaluateAssertions(req.assertions ?? [], {
          status: response.status,
          headers: response.headers,
          body: response.body,
          responseTime,
          httpVersion: response.httpVersion,
          tls,
        }),
        response.bodyError,
      )
    : [];

  const verdict = decideVerdict({
    requestError: requestError ?? scriptError,
    errorAnswer: response ? errorStatus(response) : null,
    answered: response !== null,
    assertions,
    responseTime,
    ...verdictSettings(check),
    shouldFailExcuses: 'errorAnswer',
  });
  const { hasFailures, error, isDegraded, overMaxResponseTime } = verdict;

  const apiCheckResult: ApiCheckResult = {
    request: prepared?.recorded ?? {
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
          timings,
          timingPhases,
          ...(tls ? { tls } : {}),
        }
      : null,
    assertions,
    requestError,
    jobLog: null,
    jobAssets: null,
  };

  const details: Record<string, unknown> = {
    finalUrl: state?.url.toString() ?? null,
    redirects: state?.redirects ?? [],
    remoteAddress: state?.address?.address ?? null,
    ipFamily: state?.address ? (state.address.family === 6 ? 'IPv6' : 'IPv4') : null,
    resolvedVia: state?.resolvedVia ?? null,
    tls,
  };
  // Without a response there is no response.timingPhases; how far the request got is still worth
  // seeing (e.g. a DNS that took seconds before failing).
  if (!response) {
    details.timingPhases = timingPhases;
    details.timings = timings;
  }
  if (response) {
    details.bodyBytes = response.bodyBytes;
    details.bodyComplete = response.bodyComplete;
    details.maxResponseBytes = req.maxResponseBytes ?? null;
  }
  if (verdict.shouldFail) details.shouldFail = verdict.shouldFail;

  // A failure on the network gets a traceroute (and a packet capture where allowed) in details;
  // the verdict above is final, and only network failures pay for this (src/agent/diagnostics/).
  if (response === null && run.abortKind !== 'cancelled' && state?.address) {
    const diagnostics = await diagnoseNetworkFailure(
      {
        code: failureCode,
        timedOut: run.abortKind === 'timeout',
        phase: state.phase,
        hostname: hostOf(state.url),
        address: state.address.address,
        family: state.address.family,
        port: portOf(state.url),
      },
      { signal: ctx.signal },
    );
    if (diagnostics) {
      details.traceroute = diagnostics.traceroute;
      details.pcap = diagnostics.pcap;
    }
  }

  ctx.log.debug(
    { requestError, status: response?.status ?? null, responseTime: round(responseTime), hasFailures },
    'api check done',
  );

  return {
    startedAt: startedAt.toISOString(),
    stoppedAt: stoppedAt.toISOString(),
    responseTime: round(responseTime),
    hasFailures,
    hasErrors: false,
    isDegraded,
    overMaxResponseTime,
    error,
    apiCheckResult,
    details,
  };
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
