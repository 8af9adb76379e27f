/**
 * How a protocol check's measurements become its verdict, the same for every type: a request error,
 * then the first failed assertion, then a response time over the maximum fail the run; a response
 * time over the degraded limit (but not the maximum) marks it degraded; `shouldFail` inverts the
 * verdict (a cancelled run is never a pass). With no assertions nothing about the answer is implied.
 */
import type { AssertionOf, EvaluatedAssertion } from '../../../shared/checks/types.ts';
import { describeFailedAssertion } from '../api/assertions.ts';
import { CANCELLED } from '../api/errors.ts';
import type { RunDetails } from '../../../shared/protocol.ts';
import type { CheckOutcome } from '../runner.ts';

export interface VerdictInput {
  requestError: string | null;
  /** Whether an answer came (degradation is judged only then). */
  answered: boolean;
  assertions: readonly EvaluatedAssertion<AssertionOf<string, string>>[];
  responseTime: number;
  degradedResponseTime: number;
  maxResponseTime: number;
  shouldFail: boolean;
}

export type Verdict = Pick<CheckOutcome, 'hasFailures' | 'isDegraded' | 'overMaxResponseTime' | 'error'> & {
  /** The reason the run failed before shouldFail was applied (null when it passed). */
  reason: string | null;
  inverted: boolean;
};

export function decideVerdict(v: VerdictInput): Verdict {
  const cancelled = v.requestError === CANCELLED;
  const overMaxResponseTime = !cancelled && v.maxResponseTime > 0 && v.responseTime > v.maxResponseTime;
  const isDegraded = v.answered && !overMaxResponseTime && v.degradedResponseTime > 0 && v.responseTime > v.degradedResponseTime;
  const failedAssertion = v.assertions.find((a) => !a.passed);
  const reason =
    v.requestError ??
    (failedAssertion ? describeFailedAssertion(failedAssertion) : null) ??
    (overMaxResponseTime ? `Response time ${Math.round(v.responseTime)} ms is over the maximum of ${v.maxResponseTime} ms` : null);
  let hasFailures = reason !== null;
  let error = reason;
  const inverted = v.shouldFail && !cancelled;
  if (inverted) {
    hasFailures = !hasFailures;
    error = hasFailures ? 'The check is expected to fail (shouldFail), but it passed' : null;
  }
  return { hasFailures, isDegraded, overMaxResponseTime, error, reason, inverted };
}

export const roundMs = (n: number): number => Math.round(n * 1000) / 1000;

/**
 * The outcome of a protocol check whose result lives in `details` (TCP, DNS): the verdict, the
 * type's result, and the failure reason before shouldFail inverted it.
 */
export function protocolOutcome(o: {
  startedAt: Date;
  stoppedAt: Date;
  responseTime: number;
  verdict: Verdict;
  details: RunDetails;
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
    apiCheckResult: null,
    details: {
      ...o.details,
      ...(o.verdict.inverted ? { shouldFail: { inverted: true, reason: o.verdict.reason } } : {}),
    },
  };
}
