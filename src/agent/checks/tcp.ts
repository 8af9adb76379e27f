/**
 * The TCP check runner, in the manner of blackbox_exporter's TCP prober: resolve, connect (preferred
 * IP family first, the other one when the preferred has no address or cannot be reached), send the
 * check's `data` if it has any, read what the server answers, and check it against RESPONSE_DATA and
 * RESPONSE_TIME assertions and the response-time limits.
 *
 * Reading is bounded in size (TCP_RESPONSE_CAP_BYTES) and time: it ends when the server closes the
 * connection, when the cap is reached, or when the server has been quiet for TCP_READ_QUIET_MS after
 * its last bytes. Before the first byte it waits until the check's maxResponseTime has passed (the
 * run would fail on time anyway), and then reports an empty response. The `data` phase and the
 * response time end at the last byte received, not at the quiet period that confirmed it. A check
 * that neither sends data nor asserts on RESPONSE_DATA only connects.
 *
 * Resolution and connection reuse the API check's helpers (api/connect.ts through
 * net/connect-tracked.ts: getaddrinfo with USE_OS_DNS_RESOLVER, else the agent's DNS client with a
 * getaddrinfo fallback), and failures are worded by api/errors.ts: DNS failure, connection refused,
 * timeout, reset.
 *
 * With `request.tls` (an Outpost extension, like blackbox_exporter's `tls: true`) a TLS handshake
 * follows the connect (net/tls-handshake.ts, shared with the SSL monitor), with SNI `tlsServerName` or
 * the hostname; data and the answer then go over TLS. The version, cipher and certificate are in the
 * result's `tls`. A chain that is not trusted or a certificate for another host fails the run before
 * any data is sent, unless `skipSSL` is set.
 */
import type net from 'node:net';
import type tls from 'node:tls';
import type {
  TcpAssertion,
  TcpCheckDefinition,
  TcpCheckResult,
  TcpRequest,
  TcpTlsDetails,
} from '../../shared/checks/types.ts';
import { AssertionError, evaluateAssertionsBy, selectText } from './api/assertions.ts';
import {
  CANCELLED,
  type RequestPhase,
  describeRequestError,
  isTargetError,
  timeoutMessage,
  tlsErrorText,
} from './api/errors.ts';
import { type HopMarks, cutHop, newHop } from './api/timings.ts';
import { type ConnectTrack, connectTracked, newTrack } from './net/connect-tracked.ts';
import { startRunSignal } from './net/run-signal.ts';
import { peerTrust, tlsHandshake, tlsNameOf } from './net/tls-handshake.ts';
import { finishRun, roundMs } from './net/verdict.ts';
import type { CheckContext, CheckOutcome, CheckRunner } from './runner.ts';
import { describeChain } from './ssl/certificate.ts';

/** The most of a server's answer that is read and kept in the result. */
export const TCP_RESPONSE_CAP_BYTES = 64 * 1024;
/** After the server's last bytes, this long without more means its answer is complete. */
export const TCP_READ_QUIET_MS = 200;

interface ReadOutcome {
  data: Buffer;
  truncated: boolean;
  /** When the last byte arrived, the server closed, or the wait for a first byte ended. */
  doneAt: number;
}

/**
 * Sends `data` (if any) and collects the answer within the bounds described above. Rejects with the
 * socket's error only when nothing was received: a server that resets right after answering still
 * answered.
 */
function exchangeData(
  socket: net.Socket,
  data: string | null,
  o: { signal: AbortSignal; firstByteBy: number; quietMs: number; cap: number },
): Promise<ReadOutcome> {
  return new Promise<ReadOutcome>((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let lastByteAt = performance.now();
    // Node's timers count from the event loop's cached clock, which lags behind performance.now()
    // on a busy loop, so a timer can fire early by this clock: wait again for what is left.
    const untilFirstByte = (): void => {
      const left = o.firstByteBy - performance.now();
      if (left > 0) timer = setTimeout(untilFirstByte, Math.ceil(left));
      else finish(false, performance.now());
    };
    let timer = setTimeout(untilFirstByte, Math.max(Math.ceil(o.firstByteBy - performance.now()), 0));
    const finish = (truncated: boolean, doneAt: number): void => {
      cleanup();
      resolve({ data: Buffer.concat(chunks, size), truncated, doneAt });
    };
    const onData = (chunk: Buffer): void => {
      lastByteAt = performance.now();
      const room = o.cap - size;
      chunks.push(chunk.length > room ? chunk.subarray(0, room) : chunk);
      size += Math.min(chunk.length, room);
      if (size >= o.cap) {
        // Reading stops at the cap; the answer may have gone on.
        finish(true, lastByteAt);
        return;
      }
      clearTimeout(timer);
      timer = setTimeout(() => finish(false, lastByteAt), o.quietMs);
    };
    const onEnd = (): void => finish(false, size > 0 ? lastByteAt : performance.now());
    const onError = (err: Error): void => {
      if (size > 0) finish(false, lastByteAt);
      else {
        cleanup();
        reject(err);
      }
    };
    const onAbort = (): void => {
      cleanup();
      reject(o.signal.reason);
    };
    function cleanup(): void {
      clearTimeout(timer);
      socket.off('data', onData);
      socket.off('end', onEnd);
      socket.off('error', onError);
      o.signal.removeEventListener('abort', onAbort);
    }
    socket.on('data', onData);
    socket.once('end', onEnd);
    socket.once('error', onError);
    o.signal.addEventListener('abort', onAbort, { once: true });
    if (o.signal.aborted) onAbort();
    else if (data !== null && data !== '') socket.write(data);
  });
}

function tcpActual(a: TcpAssertion, data: string, responseTime: number): unknown {
  switch (a.source) {
    case 'RESPONSE_DATA':
      // The answer is text, read as TEXT_BODY is: a regular expression in property picks from it.
      return selectText(data, a.property);
    case 'RESPONSE_TIME':
      return responseTime;
    default:
      throw new AssertionError(`unknown source "${String(a.source)}"`);
  }
}

interface Connected {
  socket: net.Socket;
  /** The TCP connection under a TLS socket (the same as `socket` without TLS). */
  raw: net.Socket;
  /** The handshake's details for a TLS check, else null. */
  tls: TcpTlsDetails | null;
  /** Why verification fails the run (untrusted chain, other host), else null. */
  tlsFailure: string | null;
}

/** The failure a certificate makes when it is verified: the host name first, then the chain. */
function verificationFailure(t: TcpTlsDetails): string | null {
  if (!t.certificate) return 'TLS error: the server presented no certificate';
  if (!t.hostnameVerified)
    return `TLS error: certificate does not match the host name "${t.serverName}": ${t.hostnameDetail}`;
  if (!t.chainTrusted) {
    const code = t.chainTrustReason ?? 'UNKNOWN';
    return `TLS error: ${tlsErrorText(code)} (${code})`;
  }
  return null;
}

/** Connects, and for `request.tls` shakes hands over the connection and reads the certificate. */
async function connect(
  req: TcpRequest,
  ctx: CheckContext,
  signal: AbortSignal,
  hop: HopMarks,
  track: ConnectTrack,
): Promise<Connected> {
  const { hostname, port, ipFamily } = req;
  const raw = await connectTracked({
    hostname,
    port,
    ipFamily,
    useOsDnsResolver: ctx.useOsDnsResolver,
    signal,
    hop,
    track,
  });
  if (req.tls !== true) return { socket: raw, raw, tls: null, tlsFailure: null };
  track.phase = 'tls';
  const name = tlsNameOf(hostname, req.tlsServerName);
  let socket: tls.TLSSocket;
  try {
    socket = await tlsHandshake(raw, name, signal);
  } catch (err) {
    raw.destroy();
    throw err;
  }
  hop.secureConnect = performance.now();
  const cipher = socket.getCipher();
  const details: TcpTlsDetails = {
    protocol: socket.getProtocol(),
    cipher: cipher?.standardName ?? cipher?.name ?? null,
    serverName: name,
    handshakeTimeMs: roundMs(hop.secureConnect - (hop.connect ?? hop.secureConnect)),
    ...peerTrust(socket, name),
    certificate: describeChain(socket)[0] ?? null,
  };
  return { socket, raw, tls: details, tlsFailure: req.skipSSL === true ? null : verificationFailure(details) };
}

/** Phase durations; a run stopped before an answer has its current phase carry the time to the stop. */
function tcpTimingPhases(
  hop: HopMarks,
  t0: number,
  tEnd: number,
  answered: boolean,
  phase: RequestPhase,
  tls: boolean,
) {
  const marks = answered ? hop : cutHop(hop, phase, tEnd);
  const socketAt = marks.socket ?? t0;
  const lookupAt = marks.lookup ?? socketAt;
  const connectAt = marks.connect ?? lookupAt;
  const secureAt = marks.secureConnect ?? connectAt;
  return {
    dns: roundMs(marks.lookup === undefined ? 0 : lookupAt - socketAt),
    connect: roundMs(marks.connect === undefined ? 0 : connectAt - lookupAt),
    ...(tls ? { tls: roundMs(marks.secureConnect === undefined ? 0 : secureAt - connectAt) } : {}),
    data: roundMs(answered || phase === 'response' ? Math.max(tEnd - secureAt, 0) : 0),
    total: roundMs(tEnd - t0),
  };
}

interface Exchange {
  read: ReadOutcome | null;
  connected: Connected | null;
  requestError: string | null;
}

/** Connect (and TLS), then send and read; every failure of the target becomes requestError. */
async function exchange(
  check: TcpCheckDefinition,
  ctx: CheckContext,
  t0: number,
  hop: HopMarks,
  track: ConnectTrack,
): Promise<Exchange> {
  const req = check.request;
  const run = startRunSignal(ctx, t0);
  const out: Exchange = { read: null, connected: null, requestError: null };
  const wantsAnswer =
    (req.data !== null && req.data !== '') || req.assertions.some((a) => a.source === 'RESPONSE_DATA');
  try {
    out.connected = await connect(req, ctx, run.signal, hop, track);
    // A certificate that fails verification ends the run before any data goes over the connection.
    if (out.connected.tlsFailure !== null) {
      out.requestError = out.connected.tlsFailure;
      return out;
    }
    track.phase = 'response';
    const connectedAt = hop.secureConnect ?? hop.connect ?? performance.now();
    out.read = wantsAnswer
      ? await exchangeData(out.connected.socket, req.data, {
          signal: run.signal,
          // Past maxResponseTime the run fails on time anyway; without one, the run's limit decides.
          // (+1 ms: the response time must be over the maximum, not equal to it.)
          firstByteBy: check.maxResponseTime > 0 ? t0 + check.maxResponseTime + 1 : performance.now() + ctx.timeoutMs,
          quietMs: TCP_READ_QUIET_MS,
          cap: TCP_RESPONSE_CAP_BYTES,
        })
      : { data: Buffer.alloc(0), truncated: false, doneAt: connectedAt };
  } catch (err) {
    if (run.abortKind === null && !isTargetError(err)) throw err;
    if (run.abortKind === null) {
      const { phase, address } = track;
      out.requestError = describeRequestError(err, {
        host: req.hostname,
        port: req.port,
        address: address?.address ?? null,
        phase,
      });
    }
  } finally {
    out.connected?.socket.destroy();
    out.connected?.raw.destroy();
    run.dispose();
  }
  if (run.abortKind !== null && out.read === null) {
    out.requestError = run.abortKind === 'timeout' ? timeoutMessage(ctx.timeoutMs, track.phase) : CANCELLED;
  }
  return out;
}

async function runTcpCheck(check: TcpCheckDefinition, ctx: CheckContext): Promise<CheckOutcome> {
  const startedAt = new Date();
  const t0 = performance.now();
  const req = check.request;
  const hop = newHop(t0);
  const track = newTrack();
  const { read, connected, requestError } = await exchange(check, ctx, t0, hop, track);
  const stoppedAt = new Date();
  const tEnd = read?.doneAt ?? performance.now();
  const timingPhases = tcpTimingPhases(hop, t0, tEnd, read !== null, track.phase, req.tls === true);
  const responseTime = timingPhases.total;
  const text = read ? read.data.toString('utf8') : '';
  const assertions = read ? evaluateAssertionsBy(req.assertions, (a) => tcpActual(a, text, responseTime)) : [];
  const address = track.address;
  const tcpCheckResult: TcpCheckResult = {
    request: { hostname: req.hostname, port: req.port, ipFamily: req.ipFamily, data: req.data, ...tlsRequest(req) },
    response: read
      ? {
          data: text,
          dataTruncated: read.truncated,
          bytesReceived: read.data.length,
          remoteAddress: address?.address ?? '',
          remotePort: req.port,
          family: address?.family === 6 ? 'IPv6' : 'IPv4',
          timingPhases,
        }
      : null,
    ...(req.tls === true ? { tls: connected?.tls ?? null } : {}),
    assertions,
    requestError,
  };
  return finishRun({
    check,
    ctx,
    label: 'tcp',
    startedAt,
    stoppedAt,
    measured: { requestError, answered: read !== null, assertions, responseTime, shouldFailExcuses: 'requestError' },
    // How far a failed run got (a DNS that took seconds before failing) is worth seeing too.
    details: () => ({ tcpCheckResult, resolvedVia: track.resolvedVia, ...(read ? {} : { timingPhases }) }),
  });
}

/** The TLS switches as the result echoes them; a plain check's request stays as it was. */
function tlsRequest(req: TcpRequest): Partial<TcpCheckResult['request']> {
  if (req.tls !== true) return {};
  return { tls: true, tlsServerName: req.tlsServerName ?? null, skipSSL: req.skipSSL === true };
}

/** Runs TCP checks (connect, optional data exchange, assertions); registered in ./index.ts. */
export const tcpCheckRunner: CheckRunner<TcpCheckDefinition> = {
  checkType: 'TCP',
  run: runTcpCheck,
};
