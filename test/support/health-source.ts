/**
 * `readyHealthSource`: what the agent's probe server reads from a daemon that is registered and whose
 * job loop runs, for tests that start the real probe server without a daemon.
 */
import type { HealthSource } from '../../src/agent/health.ts';

export function readyHealthSource(): HealthSource {
  return {
    isReady: () => true,
    jobLoopLiveness: () => ({ ok: true }),
    snapshot: () => ({
      status: 'ready',
      version: 'test',
      agentId: 'a',
      jobsRunning: 0,
      jobsQueued: 0,
      lastSuccessfulPollAt: null,
      spooled: 0,
      droppedResults: 0,
      uptimeSeconds: 1,
    }),
  };
}
