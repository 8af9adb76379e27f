/**
 * A traceroute to a failing target with Debian's `traceroute` (UDP probes, which need no privilege),
 * parsed into hops with per-hop loss and latency. The field names follow the reference's
 * CheckResultTraceroute.response.
 */
import { spawn } from 'node:child_process';
import type { TracerouteHop, TracerouteResult } from '../../shared/checks/details.ts';

export type { TracerouteHop, TracerouteResult };

export interface TracerouteOptions {
  binary?: string;
  /** Hard limit; the trace is killed and what arrived is kept. */
  timeLimitMs: number;
  maxHops?: number;
  probesPerHop?: number;
  signal?: AbortSignal;
}

const round3 = (n: number): number => Math.round(n * 1000) / 1000;

/** Parses traceroute's text output (`-n`): ` 3  10.0.0.1  1.234 ms  10.0.0.2  1.5 ms !H  *`. */
export function parseTraceroute(text: string, probesPerHop: number): TracerouteHop[] {
  const hops: TracerouteHop[] = [];
  for (const line of text.split('\n')) {
    const m = /^\s*(\d+)\s+(.*)$/.exec(line);
    if (!m) continue;
    const tokens = m[2]!.trim().split(/\s+/);
    const probes: TracerouteHop['probes'] = [];
    let current: string | null = null;
    for (let i = 0; i < tokens.length; i++) {
      const t = tokens[i]!;
      if (t === '*') probes.push(null);
      else if (tokens[i + 1] === 'ms' && /^\d+(\.\d+)?$/.test(t)) {
        probes.push({ address: current ?? '?', rtt: Number(t) });
        i++;
      } else if (t.startsWith('!') && probes.length > 0) {
        // !H, !N, !P, !X...: the router said unreachable; kept on the probe it belongs to.
        const last = probes.at(-1);
        if (last) last.annotation = t;
      } else current = t;
    }
    while (probes.length < probesPerHop) probes.push(null);
    const rtts = probes.filter((p) => p !== null).map((p) => p.rtt);
    hops.push({
      hop: Number(m[1]),
      addresses: [...new Set(probes.filter((p) => p !== null).map((p) => p.address))],
      probes,
      loss: Math.round(((probes.length - rtts.length) / probes.length) * 10000) / 100,
      latency:
        rtts.length === 0
          ? null
          : {
              min: round3(Math.min(...rtts)),
              avg: round3(rtts.reduce((a, b) => a + b, 0) / rtts.length),
              max: round3(Math.max(...rtts)),
            },
    });
  }
  return hops;
}

/** Traces the route to `address`; rejects only when traceroute cannot start (e.g. not installed). */
export function traceroute(
  hostname: string,
  address: string,
  family: 4 | 6,
  opts: TracerouteOptions,
): Promise<TracerouteResult> {
  const probesPerHop = opts.probesPerHop ?? 2;
  const args = [
    `-${family}`,
    '-n',
    '-q',
    String(probesPerHop),
    // Wait at most 1 s for a probe, 16 probes in flight: a 20-hop path of silent routers ends in ~3 s.
    '-w',
    '1',
    '-N',
    '16',
    '-m',
    String(opts.maxHops ?? 20),
    address,
  ];
  const t0 = performance.now();
  return new Promise((resolve, reject) => {
    const child = spawn(opts.binary ?? 'traceroute', args, { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let killedBy: string | null = null;
    child.stdout.setEncoding('utf8');
    child.stdout.on('data', (c: string) => {
      if (out.length < 64 * 1024) out += c;
    });
    child.stderr.resume();
    const stop = (why: string): void => {
      killedBy ??= why;
      child.kill('SIGKILL');
    };
    const timer = setTimeout(() => stop(`time limit of ${opts.timeLimitMs} ms`), opts.timeLimitMs);
    const onAbort = (): void => stop('the run was stopped');
    if (opts.signal?.aborted) onAbort();
    else opts.signal?.addEventListener('abort', onAbort, { once: true });
    child.on('error', (err) => {
      clearTimeout(timer);
      opts.signal?.removeEventListener('abort', onAbort);
      reject(err);
    });
    child.on('close', () => {
      clearTimeout(timer);
      opts.signal?.removeEventListener('abort', onAbort);
      const hops = parseTraceroute(out, probesPerHop);
      const last = hops.at(-1);
      const destinationReached = last?.addresses.includes(address) ?? false;
      const result: TracerouteResult = {
        ran: true,
        tool: 'traceroute',
        hostname,
        resolvedIp: address,
        protocol: family === 6 ? 'IPv6' : 'IPv4',
        probeProtocol: 'UDP',
        totalHops: hops.length,
        destinationReached,
        finalHopLatency: destinationReached ? (last?.latency ?? null) : null,
        hops,
        durationMs: Math.round(performance.now() - t0),
      };
      if (killedBy) result.truncationReason = killedBy;
      resolve(result);
    });
  });
}
