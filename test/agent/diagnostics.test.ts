/**
 * Network diagnostics of failed API checks: a traceroute (Debian's traceroute) and, with
 * CAP_NET_RAW, a tcpdump capture of a retried connection, attached to details; only for network
 * failures, bounded in time and concurrency, and never changing the verdict.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { apiCheckRunner } from '../../src/agent/checks/api.ts';
import { hasNetRaw } from '../../src/agent/diagnostics/capabilities.ts';
import {
  diagnoseNetworkFailure,
  isNetworkFailure,
  MAX_CONCURRENT_DIAGNOSTICS,
} from '../../src/agent/diagnostics/index.ts';
import type { PcapCaptured } from '../../src/agent/diagnostics/pcap.ts';
import { parseTraceroute, type TracerouteResult, traceroute } from '../../src/agent/diagnostics/traceroute.ts';
import { apiCheck, context, startServer, type TestServer } from './api-fixtures.ts';

/** A loopback port nothing listens on: bound, then closed. */
async function closedPort(): Promise<number> {
  const s = net.createServer();
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
  const port = (s.address() as net.AddressInfo).port;
  await new Promise<void>((r) => s.close(() => r()));
  return port;
}

/** Packet records in a pcap file (24-byte global header, then 16-byte record headers). */
function pcapRecords(buf: Buffer): number {
  expect(buf.readUInt32LE(0)).toBe(0xa1b2c3d4);
  let n = 0;
  for (let off = 24; off + 16 <= buf.length; n++) off += 16 + buf.readUInt32LE(off + 8);
  return n;
}

const has = (cmd: string): boolean => {
  try {
    execFileSync('sh', ['-c', `command -v ${cmd}`], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
};

let server: TestServer;
beforeAll(async () => {
  server = await startServer();
});
afterAll(async () => {
  await server?.close();
});

describe('an API check refused on 127.0.0.1', () => {
  it('keeps its verdict and gets a traceroute with at least one hop', async () => {
    const port = await closedPort();
    const r = await apiCheckRunner.run(apiCheck({ url: `http://127.0.0.1:${port}/` }), context());
    expect(r.hasFailures).toBe(true);
    expect(r.hasErrors).toBe(false);
    expect(r.error).toMatch(/refused/i);
    const trace = r.details?.traceroute as TracerouteResult;
    expect(trace.ran).toBe(true);
    expect(trace.totalHops).toBeGreaterThanOrEqual(1);
    expect(trace.hops[0]!.addresses).toEqual(['127.0.0.1']);
    expect(trace.hops[0]!.latency?.avg).toBeGreaterThanOrEqual(0);
    expect(trace).toMatchObject({
      destinationReached: true,
      resolvedIp: '127.0.0.1',
      protocol: 'IPv4',
      probeProtocol: 'UDP',
    });
    expect(trace.durationMs).toBeLessThan(5000);
  });

  it('with CAP_NET_RAW and tcpdump: a pcap of the retried connection (SYN and RST)', async (t) => {
    if (!hasNetRaw()) t.skip('the test process lacks CAP_NET_RAW (CI runs as root)');
    expect(has('tcpdump')).toBe(true);
    const port = await closedPort();
    const r = await apiCheckRunner.run(apiCheck({ url: `http://127.0.0.1:${port}/` }), context());
    const pcap = r.details?.pcap as PcapCaptured;
    expect(pcap.captured).toBe(true);
    expect(pcap.retry).toEqual({ address: '127.0.0.1', port, outcome: 'ECONNREFUSED' });
    expect(pcap.filter).toBe(`host 127.0.0.1 and (tcp port ${port} or icmp or icmp6)`);
    const buf = Buffer.from(pcap.base64, 'base64');
    expect(buf.length).toBe(pcap.bytes);
    expect(pcapRecords(buf)).toBeGreaterThanOrEqual(2);
    expect(pcap.packets).toBe(pcapRecords(buf));
    expect(pcap.durationMs).toBeLessThan(5000);
  });

  it('without CAP_NET_RAW the result says so plainly', async () => {
    const port = await closedPort();
    const d = await diagnoseNetworkFailure(
      {
        code: 'ECONNREFUSED',
        timedOut: false,
        phase: 'connect',
        hostname: '127.0.0.1',
        address: '127.0.0.1',
        family: 4,
        port,
      },
      { netRaw: false },
    );
    expect(d?.pcap).toEqual({ captured: false, reason: 'the agent lacks CAP_NET_RAW' });
    expect(d?.traceroute.ran).toBe(true);
  });
});

describe('only network failures, and only when on', () => {
  it('an HTTP error or a failed assertion is not diagnosed', async () => {
    const r = await apiCheckRunner.run(
      apiCheck({
        url: `${server.origin}/status/500`,
        assertions: [{ source: 'STATUS_CODE', comparison: 'EQUALS', property: '', target: '200' }],
      }),
      context(),
    );
    expect(r.hasFailures).toBe(true);
    expect(r.details?.traceroute).toBeUndefined();
    expect(r.details?.pcap).toBeUndefined();
  });

  it('a DNS failure has no address to trace', async () => {
    const r = await apiCheckRunner.run(apiCheck({ url: 'http://no-such-host.invalid/' }), context());
    expect(r.hasFailures).toBe(true);
    expect(r.details?.traceroute).toBeUndefined();
  });

  it('classifies failures', () => {
    const base = {
      code: null,
      timedOut: false,
      phase: 'connect',
      hostname: 'h',
      address: '192.0.2.9',
      family: 4 as const,
      port: 80,
    };
    expect(isNetworkFailure({ ...base, code: 'ECONNREFUSED' })).toBe(true);
    expect(isNetworkFailure({ ...base, timedOut: true })).toBe(true);
    expect(isNetworkFailure({ ...base, timedOut: true, phase: 'response' })).toBe(false);
    expect(isNetworkFailure({ ...base, code: 'DEPTH_ZERO_SELF_SIGNED_CERT', phase: 'tls' })).toBe(false);
    expect(isNetworkFailure({ ...base, code: 'ENOTFOUND', phase: 'dns', address: null })).toBe(false);
  });

  it('NETWORK_DIAGNOSTICS=false turns it off', async () => {
    const port = await closedPort();
    process.env.NETWORK_DIAGNOSTICS = 'false';
    try {
      const r = await apiCheckRunner.run(apiCheck({ url: `http://127.0.0.1:${port}/` }), context());
      expect(r.hasFailures).toBe(true);
      expect(r.details?.traceroute).toBeUndefined();
    } finally {
      delete process.env.NETWORK_DIAGNOSTICS;
    }
  });
});

/** A connection refused on loopback, as the API runner reports it to the diagnosis. */
async function refusedConnection() {
  return {
    code: 'ECONNREFUSED',
    timedOut: false,
    phase: 'connect',
    hostname: '127.0.0.1',
    address: '127.0.0.1',
    family: 4 as const,
    port: await closedPort(),
  };
}

describe('bounds', () => {
  it(`at most ${MAX_CONCURRENT_DIAGNOSTICS} at once; the others are skipped, saying why`, async () => {
    const f = await refusedConnection();
    const all = await Promise.all(
      Array.from({ length: MAX_CONCURRENT_DIAGNOSTICS + 2 }, () => diagnoseNetworkFailure(f, { netRaw: false })),
    );
    expect(all.filter((d) => d?.traceroute.ran === true)).toHaveLength(MAX_CONCURRENT_DIAGNOSTICS);
    expect(
      all.filter((d) => d?.traceroute.ran === false).map((d) => (d!.traceroute as { reason: string }).reason),
    ).toEqual([
      `skipped: ${MAX_CONCURRENT_DIAGNOSTICS} network diagnostics were already running`,
      `skipped: ${MAX_CONCURRENT_DIAGNOSTICS} network diagnostics were already running`,
    ]);
  });

  it('a trace that runs past its time limit is cut and says so', async () => {
    // A traceroute that hangs (a stand-in that only sleeps), so the limit is what ends it.
    const dir = mkdtempSync(join(tmpdir(), 'outpost-trace-'));
    const hanging = join(dir, 'traceroute');
    writeFileSync(hanging, '#!/bin/sh\nexec sleep 30\n', { mode: 0o755 });
    try {
      const t0 = performance.now();
      const r = await traceroute('127.0.0.1', '127.0.0.1', 4, { timeLimitMs: 200, binary: hanging });
      expect(performance.now() - t0).toBeLessThan(1500);
      expect(r.truncationReason).toBe('time limit of 200 ms');
      expect(r.totalHops).toBe(0);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('a cancelled run stops its diagnosis; a timed-out one does not', async () => {
    const f = await refusedConnection();
    const cancelled = new AbortController();
    cancelled.abort(new DOMException('run cancelled', 'AbortError'));
    const d1 = await diagnoseNetworkFailure(f, { signal: cancelled.signal, netRaw: false });
    expect((d1!.traceroute as TracerouteResult).truncationReason).toBe('the run was stopped');
    const timedOut = new AbortController();
    timedOut.abort(new DOMException('limit', 'TimeoutError'));
    const d2 = await diagnoseNetworkFailure(f, { signal: timedOut.signal, netRaw: false });
    expect((d2!.traceroute as TracerouteResult).truncationReason).toBeUndefined();
    expect((d2!.traceroute as TracerouteResult).totalHops).toBeGreaterThanOrEqual(1);
  });
});

describe('parsing', () => {
  it('hops with several routers, lost probes and unreachable marks', () => {
    const hops = parseTraceroute(
      [
        'traceroute to 192.0.2.9 (192.0.2.9), 20 hops max, 60 byte packets',
        ' 1  10.0.0.1  0.500 ms  0.700 ms',
        ' 2  10.1.0.1  1.000 ms 10.1.0.2  3.000 ms',
        ' 3  * *',
        ' 4  192.0.2.9  5.000 ms !H  *',
      ].join('\n'),
      2,
    );
    expect(hops.map((h) => [h.hop, h.addresses, h.loss])).toEqual([
      [1, ['10.0.0.1'], 0],
      [2, ['10.1.0.1', '10.1.0.2'], 0],
      [3, [], 100],
      [4, ['192.0.2.9'], 50],
    ]);
    expect(hops[1]!.latency).toEqual({ min: 1, avg: 2, max: 3 });
    expect(hops[3]!.probes[0]).toEqual({ address: '192.0.2.9', rtt: 5, annotation: '!H' });
  });

  it('CAP_NET_RAW is bit 13 of CapEff', () => {
    expect(hasNetRaw('CapEff:\t0000000000002000\n')).toBe(true);
    expect(hasNetRaw('CapEff:\t000001ffffffdfff\n')).toBe(false);
    expect(hasNetRaw('nothing')).toBe(false);
  });
});
