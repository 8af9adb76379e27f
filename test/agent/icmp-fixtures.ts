/** ICMP test helpers: check definitions, a spawn that counts fping processes, network namespaces. */
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import type { Spawn } from '../../src/agent/checks/icmp/fping.ts';
import type { IcmpCheckDefinition, IcmpRequest } from '../../src/shared/checks/types.ts';
import { uptimeCheckBase } from '../support/check-definition.ts';

export function icmpCheck(
  request: Partial<IcmpRequest> & { hostname: string },
  extra: Partial<IcmpCheckDefinition> = {},
): IcmpCheckDefinition {
  return {
    ...uptimeCheckBase('ICMP', { id: 'chk_icmp', accountId: 'acc_test', name: 'icmp test' }, 10_000, 20_000),
    degradedPacketLossThreshold: 10,
    maxPacketLossThreshold: 20,
    ...extra,
    request: { ipFamily: 'IPv4', pingCount: 3, assertions: [], ...request },
  };
}

/** A spawn that records every process it starts (the seam the process-count claim is proven through). */
export function countingSpawn(
  wrap?: (file: string, args: readonly string[]) => [string, string[]],
): Spawn & { calls: string[][] } {
  const calls: string[][] = [];
  const fn = ((file: string, args: readonly string[]): ChildProcess => {
    const [f, a] = wrap ? wrap(file, args) : [file, [...args]];
    calls.push([f, ...a]);
    return spawn(f, a, { stdio: ['ignore', 'ignore', 'pipe'] });
  }) as Spawn & { calls: string[][] };
  fn.calls = calls;
  return fn;
}

export function sh(cmd: string, args: string[]): string {
  return execFileSync(cmd, args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
}

/** Whether this process may create network namespaces (root with CAP_SYS_ADMIN and iproute2). */
export function netnsUnavailableReason(): string | null {
  const name = `opprobe${process.pid}`;
  try {
    sh('ip', ['netns', 'add', name]);
    sh('ip', ['netns', 'del', name]);
    return null;
  } catch (err) {
    return `network namespaces are not permitted here (ip netns add: ${String((err as { stderr?: string }).stderr ?? err).trim()})`;
  }
}

/**
 * Two namespaces joined by a veth pair, 192.0.2.1 in `a` and 192.0.2.2 in `b` (TEST-NET-1), loopback
 * up in both; nothing outside them changes. `tag` keeps the interface names apart between files.
 */
export function addVethNamespaces(ns: { a: string; b: string }, tag: string): void {
  const veth = { a: `${tag}a${process.pid}`.slice(0, 15), b: `${tag}b${process.pid}`.slice(0, 15) };
  sh('ip', ['netns', 'add', ns.a]);
  sh('ip', ['netns', 'add', ns.b]);
  sh('ip', ['link', 'add', veth.a, 'netns', ns.a, 'type', 'veth', 'peer', 'name', veth.b, 'netns', ns.b]);
  for (const [n, dev, addr] of [
    [ns.a, veth.a, '192.0.2.1/24'],
    [ns.b, veth.b, '192.0.2.2/24'],
  ] as const) {
    sh('ip', ['-n', n, 'addr', 'add', addr, 'dev', dev]);
    sh('ip', ['-n', n, 'link', 'set', dev, 'up']);
    sh('ip', ['-n', n, 'link', 'set', 'lo', 'up']);
  }
}
