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

export function capturePcap(address: string, port: number, opts: PcapOptions): Promise<PcapResult> {
  const filter = `host ${address} and (tcp port ${port} or icmp or icmp6)`;
  const t0 = performance.now();
  return new Promise((resolve) => {
    // --immediate-mode: libpcap hands each packet over at once (not after its ~1 s buffer timeout)
    // and -U writes it at once, so stopping soon after the retry loses nothing; -c/-s bound size.
    const child = spawn(
      opts.binary ?? 'tcpdump',
      [
        '-i',
        'any',
        '-n',
        '-U',
        '--immediate-mode',
        '-w',
        '-',
        '-s',
        String(SNAP_LENGTH),
        '-c',
        String(MAX_PACKETS),
        filter,
      ],
      {
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
    const chunks: Buffer[] = [];
    let bytes = 0;
    let truncated = false;
    let stderr = '';
    let listening = false;
    let retry: PcapCaptured['retry'] | null = null;
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

    child.stdout.on('data', (c: Buffer) => {
      if (bytes + c.length > PCAP_MAX_BYTES) {
        truncated = true;
        chunks.push(c.subarray(0, PCAP_MAX_BYTES - bytes));
        bytes = PCAP_MAX_BYTES;
        stop();
        return;
      }
      chunks.push(c);
      bytes += c.length;
    });
    child.stderr.setEncoding('utf8');
    child.stderr.on('data', async (c: string) => {
      if (stderr.length < 4096) stderr += c;
      if (listening || !stderr.includes('listening on')) return;
      listening = true;
      const left = opts.timeLimitMs - (performance.now() - t0);
      const outcome = await retryConnect(address, port, Math.max(100, Math.min(2000, left - 300)));
      retry = { address, port, outcome };
      // The last answers (a RST, an ICMP error) may trail the connect result by a moment.
      setTimeout(stop, 150);
    });
    child.on('error', (err: NodeJS.ErrnoException) =>
      finish({
        captured: false,
        reason:
          err.code === 'ENOENT'
            ? 'tcpdump is not installed on this agent (Debian package tcpdump)'
            : `tcpdump could not start: ${err.message}`,
      }),
    );
    child.on('close', (code) => {
      if (!listening || bytes === 0) {
        const said = stderr
          .trim()
          .split('\n')
          .filter((l) => !l.startsWith('tcpdump: listening') && !l.includes('data link type'))
          .join('; ');
        finish({
          captured: false,
          reason: `tcpdump did not capture (exit ${code}${said ? `: ${said.slice(0, 300)}` : ''})`,
        });
        return;
      }
      const data = Buffer.concat(chunks);
      finish({
        captured: true,
        format: 'pcap',
        packets: countRecords(data),
        base64: data.toString('base64'),
        bytes: data.length,
        truncated,
        filter,
        retry: retry ?? { address, port, outcome: 'not tried (time limit)' },
        durationMs: Math.round(performance.now() - t0),
      });
    });
  });
}
