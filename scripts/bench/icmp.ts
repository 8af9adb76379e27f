/**
 * ICMP checks against blackbox_exporter's icmp module: 127.0.0.1, one echo request per probe on both
 * sides (blackbox sends one; the agent's check runs with pingCount 1), through the agent's real
 * fping batcher.
 *
 *   npm run bench -- icmp [--concurrency 64] [--duration 10]
 */
import { icmpCheckRunner } from '../../src/agent/checks/icmp.ts';
import type { IcmpCheckDefinition } from '../../src/shared/checks/types.ts';
import { benchContext, compare, startBlackbox } from './_blackbox.ts';
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
  const ctx = benchContext();
  const spawnedBefore = icmpCheckRunner.batcher.spawned;
  try {
    const result = await compare({
      ...opts,
      workload: 'ICMP echo to 127.0.0.1, one echo request per probe',
      agentProbe: async () => !(await icmpCheckRunner.run(check, ctx)).hasFailures,
      blackbox,
      module: 'icmp',
      target: '127.0.0.1',
      ratioTarget: 1.0,
    });
    return { ...result, fpingProcesses: icmpCheckRunner.batcher.spawned - spawnedBefore };
  } finally {
    icmpCheckRunner.batcher.close();
    await blackbox.stop();
  }
}
