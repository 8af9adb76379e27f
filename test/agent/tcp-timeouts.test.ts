/**
 * A TCP check stopped by its time limit charges the time to the phase that was running: a connect
 * that never completes is `connect` time, not time no phase accounts for.
 */
import { describe, expect, it } from 'vitest';
import { tcpCheckRunner } from '../../src/agent/checks/tcp.ts';
import { context } from './api-fixtures.ts';
import { fullBacklog, tcpCheck } from './tcp-servers.ts';

describe('TCP timeouts', () => {
  it('a connect that never completes is connect time', async () => {
    const full = await fullBacklog();
    try {
      const outcome = await tcpCheckRunner.run(tcpCheck({ port: full.port }), context({ timeoutMs: 400 }));
      expect(outcome.error).toBe('Timed out after 400 ms while connecting');
      const phases = outcome.details?.timingPhases as { dns: number; connect: number; data: number; total: number };
      expect(phases.total).toBeGreaterThanOrEqual(395);
      expect(phases.connect, JSON.stringify(phases)).toBeGreaterThanOrEqual(phases.total * 0.6);
      expect(phases.data).toBe(0);
    } finally {
      full.close();
    }
  });
});
