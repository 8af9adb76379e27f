/**
 * The ICMP runner with Debian's fping: loopback (IPv4 and IPv6), assertions, thresholds, a target
 * that never answers (inside network namespaces the test builds), the process count of a hundred
 * concurrent checks, and an agent that cannot ping (no binary, no capability).
 */
import { execFileSync } from 'node:child_process';
import { copyFileSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FpingBatcher, parseSummary } from '../../src/agent/checks/icmp/fping.ts';
import { routeError } from '../../src/agent/checks/icmp/route.ts';
import { latencyStats, packetLoss } from '../../src/agent/checks/icmp/stats.ts';
import { createIcmpCheckRunner } from '../../src/agent/checks/icmp.ts';
import type { IcmpCheckResult } from '../../src/shared/checks/types.ts';
import { context } from './api-fixtures.ts';
import { addVethNamespaces, countingSpawn, icmpCheck, netnsUnavailableReason, sh } from './icmp-fixtures.ts';

// CI installs fping (.ci/run); a missing binary must fail here, not skip.
const fpingPath = execFileSync('sh', ['-c', 'command -v fping'], { encoding: 'utf8' }).trim();

const runner = createIcmpCheckRunner({ batcher: new FpingBatcher({ periodMs: 50, replyTimeoutMs: 500 }) });
afterAll(() => runner.batcher.close());

const icmpResult = (o: { details?: Record<string, unknown> }) => o.details?.icmpCheckResult as IcmpCheckResult;

describe('loopback', () => {
  it('127.0.0.1 answers every echo: latency statistics, no loss, a pass', async () => {
    const o = await runner.run(icmpCheck({ hostname: '127.0.0.1', pingCount: 4 }), context());
    expect(o.error).toBeNull();
    expect(o.hasFailures).toBe(false);
    expect(o.isDegraded).toBe(false);
    const res = icmpResult(o).response!;
    expect(res).toMatchObject({
      resolvedIp: '127.0.0.1',
      family: 'IPv4',
      packetsSent: 4,
      packetsReceived: 4,
      packetLoss: 0,
    });
    expect(res.pings.map((p) => p.sequence)).toEqual([0, 1, 2, 3]);
    const lat = res.latency!;
    expect(lat.min).toBeGreaterThan(0);
    expect(lat.min).toBeLessThanOrEqual(lat.avg);
    expect(lat.avg).toBeLessThanOrEqual(lat.max);
    expect(lat.stdDev).toBeGreaterThanOrEqual(0);
    expect(o.responseTime).toBe(lat.avg);
  });

  it('::1 over IPv6 when the machine has it', async (t) => {
    const why = await routeError({ address: '::1', family: 6 });
    if (why) t.skip(`IPv6 loopback is not usable here (${why})`);
    const o = await runner.run(icmpCheck({ hostname: '::1', ipFamily: 'IPv6', pingCount: 2 }), context());
    expect(o.error).toBeNull();
    expect(icmpResult(o).response).toMatchObject({ resolvedIp: '::1', family: 'IPv6', packetsReceived: 2 });
  });

  it('a name resolves through the agent: localhost', async () => {
    const o = await runner.run(icmpCheck({ hostname: 'localhost', pingCount: 1 }), context());
    expect(o.hasFailures).toBe(false);
    expect(['127.0.0.1', '::1']).toContain(icmpResult(o).response?.resolvedIp);
  });
});

describe('assertions', () => {
  it('LATENCY and JSON_RESPONSE: actual values, pass and fail', async () => {
    const o = await runner.run(
      icmpCheck({
        hostname: '127.0.0.1',
        pingCount: 2,
        assertions: [
          { source: 'LATENCY', comparison: 'LESS_THAN', property: 'avg', target: '1000', regex: '' },
          { source: 'LATENCY', comparison: 'GREATER_THAN', property: 'max', target: '1000', regex: '' },
          { source: 'JSON_RESPONSE', comparison: 'EQUALS', property: '$.packetsReceived', target: '2', regex: '' },
          { source: 'JSON_RESPONSE', comparison: 'EQUALS', property: 'resolvedIp', target: '127.0.0.1', regex: '' },
        ],
      }),
      context(),
    );
    const a = icmpResult(o).assertions;
    expect(a.map((x) => x.passed)).toEqual([true, false, true, true]);
    expect(typeof a[0]!.actual).toBe('number');
    expect(a[2]!.actual).toBe(2);
    expect(o.hasFailures).toBe(true);
    expect(o.error).toMatch(/^Assertion failed: LATENCY max GREATER_THAN "1000" \(actual: [\d.]+\)$/);
  });

  it('a LATENCY property that is not a statistic is a failed assertion with a reason', async () => {
    const o = await runner.run(
      icmpCheck({
        hostname: '127.0.0.1',
        pingCount: 1,
        assertions: [{ source: 'LATENCY', comparison: 'LESS_THAN', property: 'median', target: '5', regex: '' }],
      }),
      context(),
    );
    expect(o.hasFailures).toBe(true);
    expect(icmpResult(o).assertions[0]!.error).toMatch(/LATENCY needs property avg, min, max, stdDev; got "median"/);
  });

  it('shouldFail inverts a passing run', async () => {
    const o = await runner.run(icmpCheck({ hostname: '127.0.0.1', pingCount: 1 }, { shouldFail: true }), context());
    expect(o.hasFailures).toBe(true);
    expect(o.error).toMatch(/expected to fail/);
  });
});

describe('bad definitions and names', () => {
  it('pingCount outside 1..50 is a failed result naming the range', async () => {
    const o = await runner.run(icmpCheck({ hostname: '127.0.0.1', pingCount: 51 }), context());
    expect(o.hasFailures).toBe(true);
    expect(o.error).toBe('pingCount must be a whole number from 1 to 50; got 51');
  });

  it('a name that does not resolve is a DNS failure', async () => {
    const o = await runner.run(icmpCheck({ hostname: 'no-such-host.invalid' }), context());
    expect(o.hasFailures).toBe(true);
    expect(o.error).toMatch(/^DNS failure: could not resolve no-such-host\.invalid/);
  });

  it('cancelled while pinging: a cancelled result, promptly', async () => {
    const ac = new AbortController();
    const slow = createIcmpCheckRunner({ batcher: new FpingBatcher({ periodMs: 1000 }) });
    const p = slow.run(icmpCheck({ hostname: '127.0.0.1', pingCount: 10 }), context({ signal: ac.signal }));
    setTimeout(() => ac.abort(), 300);
    const t0 = performance.now();
    const o = await p;
    expect(performance.now() - t0).toBeLessThan(2000);
    expect(o.error).toBe('cancelled');
    slow.batcher.close();
  });
});

describe('packet loss', () => {
  const reason = netnsUnavailableReason();
  const ns = { a: `opicmpA${process.pid}`, b: `opicmpB${process.pid}` };
  const run = (
    def: object,
    osResolver = false,
  ): Record<string, unknown> & { details: Record<string, unknown> & { icmpCheckResult: IcmpCheckResult } } =>
    JSON.parse(
      sh('ip', [
        'netns',
        'exec',
        ns.a,
        process.execPath,
        join(import.meta.dirname, 'icmp-netns-run.ts'),
        JSON.stringify(def),
        String(osResolver),
      ]),
    );

  beforeAll(() => {
    if (reason) return;
    addVethNamespaces(ns, 'opv');
  });
  afterAll(() => {
    if (reason) return;
    for (const n of [ns.a, ns.b]) execFileSync('ip', ['netns', 'del', n], { stdio: 'ignore' });
    rmSync(`/etc/netns/${ns.a}`, { recursive: true, force: true });
  });

  it('the far side answers, then drops every echo: 100 % loss is a failed result', async (t) => {
    if (reason) t.skip(reason);
    const def = icmpCheck({ hostname: '192.0.2.2', pingCount: 3 });
    const before = run(def);
    expect(before.hasFailures).toBe(false);
    expect(before.details.icmpCheckResult.response?.packetLoss).toBe(0);

    // The far namespace stops answering echo requests (its own sysctl; the host's is untouched).
    sh('ip', ['netns', 'exec', ns.b, 'sysctl', '-qw', 'net.ipv4.icmp_echo_ignore_all=1']);
    const after = run(def);
    expect(after.hasFailures).toBe(true);
    expect(after.isDegraded).toBe(false);
    const res = after.details.icmpCheckResult.response!;
    expect(res).toMatchObject({ packetsSent: 3, packetsReceived: 0, packetLoss: 100, latency: null });
    expect(after.error).toBe('Packet loss 100% to 192.0.2.2 is at or above the maximum of 20% (0 of 3 replies)');
    expect(after.responseTime).toBe(0);
  });

  it('an address with no route from the namespace is a failed result, not a silent loss', async (t) => {
    if (reason) t.skip(reason);
    const o = run(icmpCheck({ hostname: '198.51.100.7', pingCount: 1 }));
    expect(o.hasFailures).toBe(true);
    expect(o.error).toBe(
      'Network unreachable: this agent has no route to 198.51.100.7 (198.51.100.7: no route to the network)',
    );
  });

  it('IPv6 asked but unusable falls back to IPv4', async (t) => {
    if (reason) t.skip(reason);
    // `ip netns exec` mounts /etc/netns/<ns>/hosts over /etc/hosts: a name with both families, ::1 first.
    mkdirSync(`/etc/netns/${ns.a}`, { recursive: true });
    writeFileSync(`/etc/netns/${ns.a}/hosts`, '::1 dual.test\n127.0.0.1 dual.test\n');
    sh('ip', ['netns', 'exec', ns.a, 'sysctl', '-qw', 'net.ipv6.conf.all.disable_ipv6=1']);
    const o = run(icmpCheck({ hostname: 'dual.test', ipFamily: 'IPv6', pingCount: 1 }), true);
    expect(o.error).toBeNull();
    expect(o.details.icmpCheckResult.response).toMatchObject({
      resolvedIp: '127.0.0.1',
      family: 'IPv4',
      packetsReceived: 1,
    });
    expect(o.details.skippedAddresses).toEqual([{ address: '::1', family: 'IPv6', code: expect.stringMatching(/^E/) }]);
  });
});

describe('thresholds', () => {
  // Loss figures a real network does not give on demand: a batcher that returns fixed round-trip
  // times (the loopback probe gets its one reply) exercises the verdict alone.
  class FixedBatcher extends FpingBatcher {
    rtts: Array<number | null> = [];
    override ping(req: { count: number }): Promise<Array<number | null>> {
      return Promise.resolve(req.count === 1 && this.rtts.length !== 1 ? [0.05] : this.rtts);
    }
  }
  const fixed = new FixedBatcher();
  const r = createIcmpCheckRunner({ batcher: fixed });
  const verdictFor = async (rtts: Array<number | null>) => {
    fixed.rtts = rtts;
    return r.run(icmpCheck({ hostname: '127.0.0.1', pingCount: rtts.length }), context());
  };

  it('loss at or above the degraded threshold (10 %) degrades, at or above the maximum (20 %) fails', async () => {
    expect(await verdictFor([1, 1, 1, 1, 1, 1, 1, 1, 1, 1])).toMatchObject({ hasFailures: false, isDegraded: false });
    expect(await verdictFor([1, 1, 1, 1, 1, 1, 1, 1, 1, null])).toMatchObject({
      hasFailures: false,
      isDegraded: true,
      error: null,
    });
    const failed = await verdictFor([1, 1, 1, 1, 1, 1, 1, 1, null, null]);
    expect(failed).toMatchObject({ hasFailures: true, isDegraded: false });
    expect(failed.error).toBe('Packet loss 20% to 127.0.0.1 is at or above the maximum of 20% (8 of 10 replies)');
  });

  it('average latency over maxResponseTime fails; over degradedResponseTime degrades', async () => {
    fixed.rtts = [30, 50];
    const over = await r.run(icmpCheck({ hostname: '127.0.0.1', pingCount: 2 }, { maxResponseTime: 35 }), context());
    expect(over).toMatchObject({ hasFailures: true, overMaxResponseTime: true, responseTime: 40 });
    const slow = await r.run(
      icmpCheck({ hostname: '127.0.0.1', pingCount: 2 }, { degradedResponseTime: 35 }),
      context(),
    );
    expect(slow).toMatchObject({ hasFailures: false, isDegraded: true });
  });
});

describe('process count', () => {
  it('a hundred concurrent checks against 127.0.0.1 start a handful of fping processes', async () => {
    const spawn = countingSpawn();
    const r = createIcmpCheckRunner({ batcher: new FpingBatcher({ spawn, periodMs: 20 }) });
    const outcomes = await Promise.all(
      Array.from({ length: 100 }, () => r.run(icmpCheck({ hostname: '127.0.0.1', pingCount: 3 }), context())),
    );
    r.batcher.close();
    expect(outcomes.filter((o) => o.hasFailures)).toEqual([]);
    expect(outcomes.every((o) => icmpResult(o).response?.packetsReceived === 3)).toBe(true);
    // One for the loopback probe, then batches; each check's address appears once per process it used.
    expect(spawn.calls.length).toBeLessThanOrEqual(5);
    const targets = spawn.calls.flatMap((c) => c.filter((a) => a === '127.0.0.1')).length;
    expect(targets).toBe(101);
  });
});

describe('an agent that cannot ping', () => {
  it('no fping binary: a failed result saying so, no throw', async () => {
    const r = createIcmpCheckRunner({ batcher: new FpingBatcher({ binary: '/nonexistent/fping' }) });
    const o = await r.run(icmpCheck({ hostname: '127.0.0.1' }), context());
    expect(o.hasFailures).toBe(true);
    expect(o.hasErrors).toBe(false);
    expect(o.error).toBe(
      'ICMP is not available on this agent: the fping binary is not installed (Debian package fping)',
    );
  });

  it('fping without cap_net_raw, as an unprivileged user: a failed result naming the capability', async (t) => {
    if (process.getuid?.() !== 0) t.skip('needs root to run fping as another user');
    // A copy loses the file capability; run as nobody it cannot open a raw socket.
    const copy = join(tmpdir(), `fping-nocap-${process.pid}`);
    copyFileSync(fpingPath, copy);
    try {
      const spawn = countingSpawn((file, args) => [
        'setpriv',
        ['--reuid=65534', '--regid=65534', '--clear-groups', file, ...args],
      ]);
      const r = createIcmpCheckRunner({ batcher: new FpingBatcher({ binary: copy, spawn }) });
      const o = await r.run(icmpCheck({ hostname: '127.0.0.1', pingCount: 1 }, { shouldFail: true }), context());
      expect(o.hasFailures).toBe(true);
      expect(o.error).toMatch(/^ICMP is not available on this agent: .*cap_net_raw.*NET_RAW/);
      // A second run within the minute does not ask again.
      await r.run(icmpCheck({ hostname: '127.0.0.1', pingCount: 1 }), context());
      expect(spawn.calls.length).toBe(1);
    } finally {
      rmSync(copy, { force: true });
    }
  });
});

describe('parsing and statistics', () => {
  it('reads fping -C summaries in argument order, lost echoes as null', () => {
    const { lines, other } = parseSummary('127.0.0.1  : 0.905 0.027 -\n::1        : - - -\nfping: something\n');
    expect(lines).toEqual([
      { target: '127.0.0.1', rtts: [0.905, 0.027, null] },
      { target: '::1', rtts: [null, null, null] },
    ]);
    expect(other).toEqual(['fping: something']);
  });

  it('population standard deviation and loss percent', () => {
    expect(latencyStats([2, 4, 4, 4, 5, 5, 7, 9])).toEqual({ min: 2, max: 9, avg: 5, stdDev: 2 });
    expect(latencyStats([null, null])).toBeNull();
    expect(packetLoss([1, null, null])).toBe(66.67);
  });
});
