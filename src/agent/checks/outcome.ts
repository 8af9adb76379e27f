/**
 * The outcome of a run that measured nothing: the agent could not run the check (no runtime, no
 * Chromium, a sandbox that would not start, a runner that ignored its abort) or the run was stopped
 * before it produced a result. Runners and the daemon build it here so every such outcome has the
 * same shape.
 */
import type { CheckOutcome } from './runner.ts';

export interface AgentErrorShape {
  /** Whether the run also counts as failed; by default an agent fault is not the check's failure. */
  hasFailures?: boolean;
  /** false for a run that was stopped (cancelled, at its limit) rather than broken by the agent. */
  hasErrors?: boolean;
  /** Milliseconds to report, or 'elapsed' for the time from startedAt to now; by default 0. */
  responseTime?: number | 'elapsed';
}

/** An outcome with `error` as its reason, stopped now, with no check result. */
export function agentErrorOutcome(startedAt: Date, error: string, shape: AgentErrorShape = {}): CheckOutcome {
  const stoppedAt = new Date();
  const responseTime = shape.responseTime ?? 0;
  return {
    startedAt: startedAt.toISOString(),
    stoppedAt: stoppedAt.toISOString(),
    responseTime: responseTime === 'elapsed' ? stoppedAt.getTime() - startedAt.getTime() : responseTime,
    hasFailures: shape.hasFailures ?? false,
    hasErrors: shape.hasErrors ?? true,
    isDegraded: false,
    overMaxResponseTime: false,
    error,
    apiCheckResult: null,
  };
}
