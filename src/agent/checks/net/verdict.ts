/**
 * How a protocol check's measurements become its verdict, the same for every type: a request error,
 * then the first failed assertion, then an error answer (an HTTP 4xx/5xx), then a response time over
 * the maximum fail the run; a response time over the degraded limit (but not the maximum) marks it
 * degraded. With no assertions nothing else about the answer is implied.
 *
 * `shouldFail` follows the reference: it turns one kind of failure into a pass and leaves the rest of
 * the verdict alone, so a good answer still passes and a failed assertion still fails. For API checks
 * that is the error answer (a 4xx/5xx status), for DNS checks an error return code, for TCP checks a
 * connection that failed (refused, timed out). A cancelled run is never a pass. docs/checks.md "Verdict" says the same.
 */
import type { AssertionOf, EvaluatedAssertion } from '../../../shared/checks/types.ts';
import { describeFailedAssertion } from '../api/assertions.ts';
import { CANCELLED } from '../api/errors.ts';
import type { RunDetails } from '../../../shared/protocol.ts';
import type { CheckContext, CheckOutcome } from '../runner.ts';
import type { ShouldFailEffect } from '../../../shared/checks/details.ts';

/** The failure shouldFail turns into a pass: the error answer, or the request error. */
export type ShouldFailExcuses = 'errorAnswer' | 'requestError';

export interface VerdictInput {
  requestError: string | null;
  /** Why the answer is itself a failure (an HTTP 4xx/5xx status), else null. */
  errorAnswer?: string | null;
  /** Whether an answer came (degradation is judged only then). */
  answered: boolean;
  assertions: readonly EvaluatedAssertion<AssertionOf<string, string>>[];
  responseTime: number;
  degradedResponseTime: number;
  maxResponseTime: number;
  shouldFail: boolean;
  /** What shouldFail excuses for this check type. */
  shouldFailExcuses: ShouldFailExcuses;
  /** The type's own reason to call an answered run that passed degraded (an SSL certificate near expiry). */
  degradedAnyway?: boolean;
}

/** What shouldFail did to a run, kept in `details.shouldFail`. */
export type { ShouldFailEffect };

export type Verdict = Pick<CheckOutcome, 'hasFailures' | 'isDegraded' | 'overMaxResponseTime' | 'error'> & {
  /** What shouldFail changed, or null when it changed nothing. */
  shouldFail: ShouldFailEffect | null;
};

/** What the verdict reads from a check's definition: its time limits and shouldFail. */
function verdictSettings(check: {
  degradedResponseTime: number;
  maxResponseTime: number;
  shouldFail?: boolean;
}): Pick<VerdictInput, 'degradedResponseTime' | 'maxResponseTime' | 'shouldFail'> {
  return {
    degradedResponseTime: check.degradedResponseTime,
    maxResponseTime: check.maxResponseTime,
    shouldFail: check.shouldFail === true,
  };
}

/** The first failure of the run, leaving out the one named by `excused`. */
function firstFailure(v: VerdictInput, overMax: boolean, excused: ShouldFailExcuses | null): string | null {
  // A request that failed has no answer to judge: excused, the run passes.
  if (v.requestError !== null) return excused === 'requestError' ? null : v.requestError;
  const failedAssertion = v.assertions.find((a) => !a.passed);
  if (failedAssertion) return describeFailedAssertion(failedAssertion);
  if (v.errorAnswer && excused !== 'errorAnswer') return v.errorAnswer;
  return overMax
    ? `Response time ${Math.round(v.responseTime)} ms is over the maximum of ${v.maxResponseTime} ms`
    : null;
}

/** The run's verdict by the rules above, then degraded anyway where the check type says so. */
export function decideVerdict(v: VerdictInput): Verdict {
  const verdict = judge(v);
  if (v.degradedAnyway === true && v.answered && !verdict.hasFailures) verdict.isDegraded = true;
  return verdict;
}

/** The verdict from the request error, assertions, error answer, time limits and shouldFail. */
function judge(v: VerdictInput): Verdict {
  const cancelled = v.requestError === CANCELLED;
  const overMaxResponseTime = !cancelled && v.maxResponseTime > 0 && v.responseTime > v.maxResponseTime;
  const isDegraded =
    v.answered && !overMaxResponseTime && v.degradedResponseTime > 0 && v.responseTime > v.degradedResponseTime;
  const base = { isDegraded, overMaxResponseTime };
  const reason = firstFailure(v, overMaxResponseTime, null);
  if (!v.shouldFail || cancelled) return { ...base, hasFailures: reason !== null, error: reason, shouldFail: null };
  const error = firstFailure(v, overMaxResponseTime, v.shouldFailExcuses);
  const excused = v.shouldFailExcuses === 'requestError' ? v.requestError : (v.errorAnswer ?? null);
  return { ...base, hasFailures: error !== null, error, shouldFail: excused ? { excused } : null };
}

export const roundMs = (n: number): number => Math.round(n * 1000) / 1000;

/**
 * The outcome of a protocol check: the verdict, the type's result (in `details`, or for API and URL
 * checks in `apiCheckResult`), and what shouldFail changed.
 */
function protocolOutcome(o: {
  startedAt: Date;
  stoppedAt: Date;
  responseTime: number;
  verdict: Verdict;
  details: RunDetails;
  apiCheckResult?: CheckOutcome['apiCheckResult'];
}): CheckOutcome {
  return {
    startedAt: o.startedAt.toISOString(),
    stoppedAt: o.stoppedAt.toISOString(),
    responseTime: o.responseTime,
    hasFailures: o.verdict.hasFailures,
    hasErrors: false,
    isDegraded: o.verdict.isDegraded,
    overMaxResponseTime: o.verdict.overMaxResponseTime,
    error: o.verdict.error,
    apiCheckResult: o.apiCheckResult ?? null,
    details: {
      ...o.details,
      ...(o.verdict.shouldFail ? { shouldFail: o.verdict.shouldFail } : {}),
    },
  };
}

/** What a run measured, before the check's time limits and shouldFail judge it. */
export type Measured = Omit<VerdictInput, keyof ReturnType<typeof verdictSettings>>;

export interface FinishedRun {
  check: Parameters<typeof verdictSettings>[0];
  ctx: Pick<CheckContext, 'log'>;
  /** The check type as the debug line names it: `<label> check done`. */
  label: string;
  startedAt: Date;
  stoppedAt: Date;
  measured: Measured;
  /** More fields for the debug line (the answer's status or rcode). */
  logged?: Record<string, unknown>;
  /** The type's result for `details`, which may depend on the verdict. */
  details: (verdict: Verdict) => RunDetails;
  apiCheckResult?: CheckOutcome['apiCheckResult'];
}

/** The one ending of every protocol run: decide the verdict, log it, build the outcome. */
export function finishRun(f: FinishedRun): CheckOutcome {
  const { measured } = f;
  const verdict = decideVerdict({ ...measured, ...verdictSettings(f.check) });
  const details = f.details(verdict);
  f.ctx.log.debug(
    {
      requestError: measured.requestError,
      ...f.logged,
      responseTime: measured.responseTime,
      hasFailures: verdict.hasFailures,
    },
    `${f.label} check done`,
  );
  return protocolOutcome({
    startedAt: f.startedAt,
    stoppedAt: f.stoppedAt,
    responseTime: measured.responseTime,
    verdict,
    details,
    apiCheckResult: f.apiCheckResult,
  });
}
