/**
 * A run result as an agent reports one, for tests and benchmarks that store, spool or submit results:
 * a passing API run unless `fields` say otherwise. Each caller names what it reads back (times,
 * response time, agent); the rest are the plain values of a run that passed.
 */
import type { RunResult } from '../../src/shared/protocol.ts';

export type RunResultFields = Pick<RunResult, 'runId' | 'checkId'> & Partial<RunResult>;

export function passingRunResult(fields: RunResultFields): RunResult {
  const { runId, checkId, ...given } = fields;
  const now = new Date().toISOString();
  return {
    runId,
    checkId,
    checkType: 'API',
    startedAt: now,
    stoppedAt: now,
    responseTime: 12,
    hasFailures: false,
    hasErrors: false,
    isDegraded: false,
    overMaxResponseTime: false,
    isCancelled: false,
    error: null,
    apiCheckResult: null,
    agent: { id: 'test-agent', version: '0.0.0' },
    scheduleLagMs: 0,
    ...given,
  };
}
