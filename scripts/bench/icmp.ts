/**
 * ICMP checks against blackbox_exporter's icmp module: 127.0.0.1, one echo request per probe on both
 * sides (blackbox sends one; the agent's check runs with pingCount 1), through the agent's real
 * pinger: the persistent ICMP helper, as the Docker images run it (ICMP_HELPER_PATH; compiled here
 * into .bench/ with the machine's C compiler).
 *
 *   npm run bench -- icmp [--concurrency 64] [--duration 10] [--ab 1]
 *
 * --ab 1 also runs the agent's engine with fping batches (ICMP_HELPER_PATH unset), in the same run,
 * and reports it as `fpingAgent` with its own ratio to the same blackbox figure.
 */
import { mkdirSync } from 'node:fs';
import { buildIcmpHelper } from '../../src/agent/checks/icmp/helper/build.ts';
import type { IcmpCheckDefinition } from '../../src/shared/checks/types.ts';
import { compare, startBlackbox } from './_blackbox.ts';
import { agentEnv, agentNodeFlags, buildDist, ROOT } from './_dist.ts';
import { runEngine } from './_engine.ts';
import { numberFlags } from './_stats.ts';

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

/** The agent's engine with fping batches instead of the helper (the engine inherits this process's env). */
async function fpingSide(opts: { concurrency: number; duration: number }): Promise<Record<string, unknown>> {
  const helperPath = process.env.ICMP_HELPER_PATH;
  delete process.env.ICMP_HELPER_PATH;
  try {
    const run = await runEngine({
      dist: buildDist(),
      checkType: 'ICMP',
      check,
      concurrency: opts.concurrency,
      durationSeconds: opts.duration,
      warmupSeconds: 1,
      nodeFlags: agentNodeFlags(),
      env: agentEnv(),
    });
    return { ...run.result, peakRssMb: run.peakRssMb };
  } finally {
    process.env.ICMP_HELPER_PATH = helperPath;
  }
}

export async function run(args: string[]): Promise<Record<string, unknown>> {
  const opts = numberFlags(args, { concurrency: 64, duration: 10, ab: 0 });
  mkdirSync(`${ROOT}.bench`, { recursive: true });
  process.env.ICMP_HELPER_PATH = buildIcmpHelper(`${ROOT}.bench/outpost-icmp`);
  const fpingAgent = opts.ab ? await fpingSide(opts) : undefined;
  const blackbox = await startBlackbox();
  try {
    const result = await compare({
      concurrency: opts.concurrency,
      duration: opts.duration,
      workload: 'ICMP echo to 127.0.0.1, one echo request per probe, through the ICMP helper',
      checkType: 'ICMP',
      check,
      blackbox,
      module: 'icmp',
      target: '127.0.0.1',
      ratioTarget: 1.0,
    });
    if (!fpingAgent) return result;
    const bb = (result.blackbox as { probesPerSecond: number }).probesPerSecond;
    const fpingRatio = Math.round(((fpingAgent.probesPerSecond as number) / bb) * 100) / 100;
    return { ...result, fpingAgent, fpingRatio };
  } finally {
    await blackbox.stop();
  }
}
