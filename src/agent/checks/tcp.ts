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
 * Resolution and connection reuse the API check's helpers (api/connect.ts: getaddrinfo with
 * USE_OS_DNS_RESOLVER, else the agent's DNS client with a getaddrinfo fallback), and failures are
 * worded by api/errors.ts: DNS failure, connection refused, timeout, reset.
 */
import type net from 'node:net';
import type { TcpAssertion, TcpCheckDefinition, TcpCheckResult } from '../../shared/checks/types.ts';
import { AssertionError, evaluateAssertionsBy, selectText } from './api/assertions.ts';
import { type ResolvedAddress, type ResolvedVia, connectOnce } from './api/connect.ts';
import { CANCELLED, type RequestPhase, describeRequestError, isTargetError, timeoutMessage } from './api/errors.ts';
import { cutHop, newHop } from './api/timings.ts';
import { startRunSignal } from './net/run-signal.ts';
import { decideVerdict, protocolOutcome, roundMs, verdictSettings } from './net/verdict.ts';
import type { CheckContext, CheckOutcome, CheckRunner } from './runner.ts';

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

async function runTcpCheck(check: TcpCheckDefinition, ctx: CheckContext): Promise<CheckOutcome> {
  const startedAt = new Date();
  const t0 = performance.now();
  const req = check.request;
  const run = startRunSignal(ctx, t0);
  const hop = newHop(t0);
  let phase: RequestPhase = 'setup';
  let address: ResolvedAddress | null = null;
  let resolvedVia: ResolvedVia | null = null;
  let socket: net.Socket | null = null;
  let read: ReadOutcome | null = null;
  let requestError: string | null = null;
  const wantsAnswer = (req.data !== null && req.data !== '') || req.assertions.some((a) => a.source === 'RESPONSE_DATA');
  try {
    socket = await connectOnce(req.hostname, req.port, false, {
      ipFamily: req.ipFamily === 'IPv6' ? 'IPv6' : 'IPv4',
      useOsDnsResolver: ctx.useOsDnsResolver,
      skipSSL: false,
      signal: run.signal,
      hop,
      onPhase: (p) => {
        phase = p;
      },
      onAddress: (a, via) => {
        address = a;
        resolvedVia = via;
      },
      onTls: () => {},
    });
    phase = 'response';
    const connectedAt = hop.connect ?? performance.now();
    read = wantsAnswer
      ? await exchangeData(socket, req.data, {
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
      requestError = describeRequestError(err, {
        host: req.hostname,
        port: req.port,
        address: (address as ResolvedAddress | null)?.address ?? null,
        phase,
      });
    }
  } finally {
    socket?.destroy();
    run.dispose();
  }
  if (run.abortKind !== null && read === null) {
    requestError = run.abortKind === 'timeout' ? timeoutMessage(ctx.timeoutMs, phase) : CANCELLED;
  }
  const stoppedAt = new Date();
  const tEnd = read?.doneAt ?? performance.now();
  // A run stopped before an answer: the phase it was in carries the time up to the stop.
  const marks = read ? hop : cutHop(hop, phase, tEnd);
  const socketAt = marks.socket ?? t0;
  const lookupAt = marks.lookup ?? socketAt;
  const connectAt = marks.connect ?? lookupAt;
  const timingPhases = {
    dns: roundMs(marks.lookup === undefined ? 0 : lookupAt - socketAt),
    connect: roundMs(marks.connect === undefined ? 0 : connectAt - lookupAt),
    data: roundMs(read || phase === 'response' ? Math.max(tEnd - connectAt, 0) : 0),
    total: roundMs(tEnd - t0),
  };
  const responseTime = timingPhases.total;
  const text = read ? read.data.toString('utf8') : '';
  const assertions = read ? evaluateAssertionsBy(req.assertions, (a) => tcpActual(a, text, responseTime)) : [];
  const verdict = decideVerdict({
    requestError,
    answered: read !== null,
    assertions,
    responseTime,
    ...verdictSettings(check),
    shouldFailExcuses: 'requestError',
  });

  const connected = address as ResolvedAddress | null;
  const tcpCheckResult: TcpCheckResult = {
    request: { hostname: req.hostname, port: req.port, ipFamily: req.ipFamily, data: req.data },
    response:
      read && socket
        ? {
            data: text,
            dataTruncated: read.truncated,
            bytesReceived: read.data.length,
            remoteAddress: connected?.address ?? '',
            remotePort: req.port,
            family: connected?.family === 6 ? 'IPv6' : 'IPv4',
            timingPhases,
          }
        : null,
    assertions,
    requestError,
  };
  ctx.log.debug({ requestError, responseTime, hasFailures: verdict.hasFailures }, 'tcp check done');
  return protocolOutcome({
    startedAt,
    stoppedAt,
    responseTime,
    verdict,
    details: {
      tcpCheckResult,
      resolvedVia,
      // How far a failed run got (a DNS that took seconds before failing) is worth seeing too.
      ...(read ? {} : { timingPhases }),
    },
  });
}

/** Runs TCP checks (connect, optional data exchange, assertions); registered in ./index.ts. */
export const tcpCheckRunner: CheckRunner<TcpCheckDefinition> = {
  checkType: 'TCP',
  run: runTcpCheck,
};
