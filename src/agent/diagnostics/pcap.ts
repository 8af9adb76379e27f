/**
 * A packet capture of one more connection attempt to a failing target: tcpdump is started with a
 * filter on the target's address and port (plus ICMP, which carries "unreachable" answers), the TCP
 * connection is tried again once it listens, and the capture stops shortly after. Bounded in time,
 * packets and bytes; only headers are kept (small snap length), so no request content is captured.
 *
 * The capture is of a *retry*, not of the check's own attempt: starting tcpdump before every run
 * would put a process start on the hot path of every check (issue 3: protocol checks do not pay a
 * process per run). docs/checks.md says so.
 */
import { spawn } from 'node:child_process';
import net from 'node:net';
import type { PcapCaptured, PcapNotCaptured, PcapResult } from '../../shared/checks/details.ts';

export const PCAP_MAX_BYTES = 256 * 1024;
const SNAP_LENGTH = 160;
const MAX_PACKETS = 200;

export type { PcapCaptured, PcapNotCaptured, PcapResult };

export interface PcapOptions {
  binary?: string;
  /** Whole capture, tcpdump start included. */
  timeLimitMs: number;
  signal?: AbortSignal;
}

function retryConnect(address: string, port: number, timeoutMs: number): Promise<string> {
  return new Promise((resolve) => {
    const socket = net.connect({ host: address, port });
    const done = (outcome: string): void => {
      clearTimeout(timer);
      socket.destroy();
      resolve(outcome);
    };
    const timer = setTimeout(() => done('timeout'), timeoutMs);
    socket.once('connect', () => done('connected'));
    socket.once('error', (err: NodeJS.ErrnoException) => done(err.code ?? err.message));
  });
}

/** Whole packet records after the 24-byte pcap file header (each: 16-byte header + captured bytes). */
export function countRecords(data: Buffer): number {
  let n = 0;
  for (let off = 24; off + 16 <= data.length; n++) {
    const len = data.readUInt32LE(off + 8);
    if (off + 16 + len > data.length) break;
    off += 16 + len;
  }
  return n;
}

/** What a capture has gathered so far. */
interface Capture {
  readonly chunks: Buffer[];
  bytes: number;
  truncated: boolean;
  stderr: string;
  listening: boolean;
  retry: PcapCaptured['retry'] | null;
}

function startTcpdump(binary: string | undefined, filter: string) {
  // --immediate-mode: libpcap hands each packet over at once (not after its buffer timeout) and -U
  // writes it at once, so stopping soon after the retry loses nothing; -c/-s bound size.
  const args = ['-i', 'any', '-n', '-U', '--immediate-mode', '-w', '-', '-s', String(SNAP_LENGTH)];
  return spawn(binary ?? 'tcpdump', [...args, '-c', String(MAX_PACKETS), filter], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
}

/** Keeps the capture's bytes up to PCAP_MAX_BYTES, and stops tcpdump when they are reached. */
function keepBytes(cap: Capture, chunk: Buffer, stop: () => void): void {
  if (cap.bytes + chunk.length > PCAP_MAX_BYTES) {
    cap.truncated = true;
    cap.chunks.push(chunk.subarray(0, PCAP_MAX_BYTES - cap.bytes));
    cap.bytes = PCAP_MAX_BYTES;
    stop();
    return;
  }
  cap.chunks.push(chunk);
  cap.bytes += chunk.length;
}

function spawnFailure(err: NodeJS.ErrnoException): PcapNotCaptured {
  return {
    captured: false,
    reason:
      err.code === 'ENOENT'
        ? 'tcpdump is not installed on this agent (Debian package tcpdump)'
        : `tcpdump could not start: ${err.message}`,
  };
}

/** Why tcpdump ended without a capture, in its own words minus its start-up chatter. */
function notCaptured(code: number | null, stderr: string): PcapNotCaptured {
  const said = stderr
    .trim()
    .split('\n')
    .filter((l) => !l.startsWith('tcpdump: listening') && !l.includes('data link type'))
    .join('; ');
  return { captured: false, reason: `tcpdump did not capture (exit ${code}${said ? `: ${said.slice(0, 300)}` : ''})` };
}

export function capturePcap(address: string, port: number, opts: PcapOptions): Promise<PcapResult> {
  const filter = `host ${address} and (tcp port ${port} or icmp or icmp6)`;
  const t0 = performance.now();
  return new Promise((resolve) => {
    const child = startTcpdump(opts.binary, filter);
    const cap: Capture = { chunks: [], bytes: 0, truncated: false, stderr: '', listening: false, retry: null };
    let settled = false;
    const finish = (result: PcapResult): void => {
      if (settled) return;
      settled = true;
      clearTimeout(limit);
      opts.signal?.removeEventListener('abort', onAbort);
      resolve(result);
    };
    const stop = (): void => {
      child.kill('SIGTERM');
    };
    const limit = setTimeout(stop, opts.timeLimitMs);
    const onAbort = (): void => stop();
    if (opts.signal?.aborted) onAbort();
    else opts.signal?.addEventListener('abort', onAbort, { once: true });

    child.stdout.on('data', (c: Buffer) => keepBytes(cap, c, stop));
    child.stderr.setEncoding('utf8');
    child.stderr.on('data', async (c: string) => {
      if (cap.stderr.length < 4096) cap.stderr += c;
      if (cap.listening || !cap.stderr.includes('listening on')) return;
      cap.listening = true;
      const left = opts.timeLimitMs - (performance.now() - t0);
      const outcome = await retryConnect(address, port, Math.max(100, Math.min(2000, left - 300)));
      cap.retry = { address, port, outcome };
      // The last answers (a RST, an ICMP error) may trail the connect result by a moment.
      setTimeout(stop, 150);
    });
    child.on('error', (err: NodeJS.ErrnoException) => finish(spawnFailure(err)));
    child.on('close', (code) => {
      if (!cap.listening || cap.bytes === 0) return finish(notCaptured(code, cap.stderr));
      const data = Buffer.concat(cap.chunks);
      finish({
        captured: true,
        format: 'pcap',
        packets: countRecords(data),
        base64: data.toString('base64'),
        bytes: data.length,
        truncated: cap.truncated,
        filter,
        retry: cap.retry ?? { address, port, outcome: 'not tried (time limit)' },
        durationMs: Math.round(performance.now() - t0),
      });
    });
  });
}
