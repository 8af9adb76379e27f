/**
 * Network diagnostics for API checks that failed on the network: a traceroute to the target and,
 * where the agent has CAP_NET_RAW, a packet capture of one more connection attempt. Both go into the
 * result's details (`details.traceroute`, `details.pcap`); the check's verdict is already decided
 * and is never changed by them.
 *
 * Off the hot path: only network failures (refused, reset, unreachable, a timeout while connecting
 * or in the TLS handshake) are diagnosed; not DNS failures (no address to trace), TLS certificate
 * errors, HTTP errors or failed assertions. Each diagnosis takes at most DIAGNOSTICS_TIME_LIMIT_MS,
 * and at most MAX_CONCURRENT run at once (more are skipped, saying so). NETWORK_DIAGNOSTICS=false
 * turns it off. docs/checks.md, "Network diagnostics".
 */
import { hasNetRaw } from './capabilities.ts';
import { type PcapResult, capturePcap } from './pcap.ts';
import { traceroute } from './traceroute.ts';
import type { TracerouteDetails } from '../../shared/checks/details.ts';

export const DIAGNOSTICS_TIME_LIMIT_MS = 5_000;
export const MAX_CONCURRENT_DIAGNOSTICS = 4;

/** Error codes that say the network (not the server's software) failed the connection. */
const NETWORK_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ECONNABORTED',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'EHOSTDOWN',
  'ENETDOWN',
  'EPIPE',
  'UND_ERR_CONNECT_TIMEOUT',
  'UND_ERR_SOCKET',
]);

export interface NetworkFailure {
  /** The error code of the failure, when there was one. */
  code: string | null;
  /** The run hit its time limit. */
  timedOut: boolean;
  /** Where the request was: dns, connect, tls, response, body... */
  phase: string;
  hostname: string;
  /** The address the connection went to; null when DNS did not answer. */
  address: string | null;
  family: 4 | 6;
  port: number;
}

export type { TracerouteDetails };

export interface NetworkDiagnostics {
  traceroute: TracerouteDetails;
  pcap: PcapResult;
}

/** Whether a failure is one worth a traceroute: the network, during connection set-up. */
export function isNetworkFailure(f: NetworkFailure): boolean {
  if (f.address === null) return false;
  if (f.timedOut) return f.phase === 'connect' || f.phase === 'tls';
  if (f.code === null || !NETWORK_CODES.has(f.code)) return false;
  return f.phase === 'connect' || f.phase === 'tls' || f.phase === 'response';
}

export function diagnosticsEnabled(env: NodeJS.ProcessEnv = process.env): boolean {
  const v = (env.NETWORK_DIAGNOSTICS ?? '').trim().toLowerCase();
  return !(v === 'false' || v === '0' || v === 'off' || v === 'no');
}

export interface DiagnoseOptions {
  /**
   * The run's signal. A cancel or shutdown stops the diagnosis; the run's time limit (a TimeoutError
   * reason) does not, since a timeout is one of the failures worth diagnosing (the daemon waits for
   * an aborted run longer than DIAGNOSTICS_TIME_LIMIT_MS).
   */
  signal?: AbortSignal;
  timeLimitMs?: number;
  /** Overrides for tests. */
  netRaw?: boolean;
  tracerouteBinary?: string;
  tcpdumpBinary?: string;
}

let running = 0;

function stopSignal(run: AbortSignal | undefined): AbortSignal | undefined {
  if (!run) return undefined;
  const controller = new AbortController();
  const isTimeout = (): boolean => (run.reason as { name?: unknown } | undefined)?.name === 'TimeoutError';
  const onAbort = (): void => {
    if (!isTimeout()) controller.abort(run.reason);
  };
  if (run.aborted) onAbort();
  else run.addEventListener('abort', onAbort, { once: true });
  return controller.signal;
}

/**
 * Diagnoses a failed connection, or returns null when the failure is not a network one or
 * diagnostics are off. Never throws.
 */
export async function diagnoseNetworkFailure(
  f: NetworkFailure,
  opts: DiagnoseOptions = {},
): Promise<NetworkDiagnostics | null> {
  if (!diagnosticsEnabled() || !isNetworkFailure(f) || f.address === null) return null;
  if (running >= MAX_CONCURRENT_DIAGNOSTICS) {
    const reason = `skipped: ${MAX_CONCURRENT_DIAGNOSTICS} network diagnostics were already running`;
    return { traceroute: { ran: false, reason }, pcap: { captured: false, reason } };
  }
  running++;
  try {
    const timeLimitMs = opts.timeLimitMs ?? DIAGNOSTICS_TIME_LIMIT_MS;
    const address = f.address;
    const signal = stopSignal(opts.signal);
    const trace = traceroute(f.hostname, address, f.family, {
      timeLimitMs,
      signal,
      binary: opts.tracerouteBinary,
    }).catch(
      (err: NodeJS.ErrnoException): TracerouteDetails => ({
        ran: false,
        reason:
          err.code === 'ENOENT'
            ? 'traceroute is not installed on this agent (Debian package traceroute)'
            : `traceroute failed: ${err.message}`,
      }),
    );
    const netRaw = opts.netRaw ?? hasNetRaw();
    const pcap: Promise<PcapResult> = netRaw
      ? capturePcap(address, f.port, { timeLimitMs, signal, binary: opts.tcpdumpBinary })
      : Promise.resolve({ captured: false, reason: 'the agent lacks CAP_NET_RAW' });
    const [t, p] = await Promise.all([trace, pcap]);
    return { traceroute: t, pcap: p };
  } finally {
    running--;
  }
}
