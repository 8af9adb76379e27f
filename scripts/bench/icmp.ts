/**
 * ICMP checks against blackbox_exporter's icmp module: 127.0.0.1, one echo request per probe on both
 * sides (blackbox sends one; the agent's check runs with pingCount 1), through the agent's real
 * fping batcher.
 *
 *   npm run bench -- icmp [--concurrency 64] [--duration 10]
 */
import type { IcmpCheckDefinition } from '../../src/shared/checks/types.ts';
import { compare, startBlackbox } from './_blackbox.ts';
import { numberFlags } from './_stats.ts';

export async function run(args: string[]): Promise<Record<string, unknown>> {
  const opts = numberFlags(args, { concurrency: 64, duration: 10 });
  const blackbox = await startBlackbox();
  const check: IcmpCheckDefinition = {
    id: 'bench',
    accountId: 'bench',
    name: 'bench',
    checkType: 'ICMP',
    shouldFail: false,
    runtimeId: null,
    degradedResponseTime: 10000,
    maxResponseTime: 20000,
    degradedPacketLossThreshold: 10,
    maxPacketLossThreshold: 20,
    request: { hostname: '127.0.0.1', ipFamily: 'IPv4', pingCount: 1, assertions: [] },
  };
  try {
    // The engine process reports how many fping processes it started (fpingProcesses).
    return await compare({
      ...opts,
      workload: 'ICMP echo to 127.0.0.1, one echo request per probe',
      checkType: 'ICMP',
      check,
      blackbox,
      module: 'icmp',
      target: '127.0.0.1',
      ratioTarget: 1.0,
    });
  } finally {
    await blackbox.stop();
  }
}
