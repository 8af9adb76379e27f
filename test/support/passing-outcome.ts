/** `passingOutcome`: what a fake API runner returns for a check that passed just now. */
import type { CheckOutcome } from '../../src/agent/checks/runner.ts';

export function passingOutcome(responseTime = 0): CheckOutcome {
  const now = new Date().toISOString();
  return {
    startedAt: now,
    stoppedAt: now,
    responseTime,
    hasFailures: false,
    hasErrors: false,
    isDegraded: false,
    overMaxResponseTime: false,
    error: null,
    apiCheckResult: null,
  };
}
