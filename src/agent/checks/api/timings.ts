/**
 * Where the time of an API check went. Timestamps come from performance.now() (monotonic, sub-ms),
 * taken by the agent's own connect function (DNS done, TCP 'connect', TLS 'secureConnect'), when
 * undici hands over the response headers, and when the body has been read.
 *
 * The two shapes in a result follow the reference (CheckResultAPI, from `got`'s http-timer):
 *  - `timings`: cumulative milliseconds since the run started, per event
 *    (socket, lookup, connect, secureConnect, response, end);
 *  - `timingPhases`: durations {wait, dns, tcp, tls, firstByte, download, total}.
 */
import type { TimingPhases } from '../../../shared/checks/types.ts';
import type { RequestPhase } from './errors.ts';

/** Timestamps (performance.now()) of one request/response exchange on one fresh connection. */
export interface HopMarks {
  /** The hop began (request handed to undici). */
  start: number;
  /** undici asked for a socket: the agent's connector started (DNS begins). */
  socket?: number;
  /** DNS answered (equal to `socket` for an IP literal). */
  lookup?: number;
  /** TCP connected. */
  connect?: number;
  /** TLS handshake done (https only). */
  secureConnect?: number;
  /** Response headers arrived. */
  response?: number;
  /** The body was read (or discarded) to its end. */
  end?: number;
}

export function newHop(start: number = performance.now()): HopMarks {
  return { start };
}

const nonNeg = (n: number): number => Math.max(n, 0);
const round = (n: number): number => Math.round(n * 1000) / 1000;

/** Phase durations of one hop; phases the hop never reached count 0. */
export function hopPhases(h: HopMarks): Omit<TimingPhases, 'total'> {
  const socket = h.socket ?? h.start;
  const lookup = h.lookup ?? socket;
  const connect = h.connect ?? lookup;
  const secure = h.secureConnect ?? connect;
  return {
    wait: h.socket === undefined ? 0 : nonNeg(socket - h.start),
    dns: h.lookup === undefined ? 0 : nonNeg(lookup - socket),
    tcp: h.connect === undefined ? 0 : nonNeg(connect - lookup),
    tls: h.secureConnect === undefined ? 0 : nonNeg(secure - connect),
    // firstByte includes sending the request: undici does not report when the upload finished.
    firstByte: h.response === undefined ? 0 : nonNeg(h.response - secure),
    download: h.end === undefined || h.response === undefined ? 0 : nonNeg(h.end - h.response),
  };
}

/** The mark that ends each phase of a hop ('setup' is agent-side time, which `wait` takes). */
const PHASE_END: Record<Exclude<RequestPhase, 'setup'>, keyof HopMarks> = {
  dns: 'lookup',
  connect: 'connect',
  tls: 'secureConnect',
  response: 'response',
  body: 'end',
};

/**
 * A hop that was cut off (a timeout, a reset) while in `phase`: that phase is taken to end at `at`,
 * so it carries the time it ran, rather than leaving it to `wait`. Only for the phase durations;
 * the cumulative `timings` list only what happened.
 */
export function cutHop(h: HopMarks, phase: RequestPhase, at: number): HopMarks {
  if (phase === 'setup') return h;
  const mark = PHASE_END[phase];
  return h[mark] === undefined ? { ...h, [mark]: at } : h;
}

/**
 * Phases of a whole run. With redirects every hop opened its own connection, so dns/tcp/tls/
 * firstByte/download are summed over the hops; `total` is the run's end-to-end time and `wait` takes
 * whatever is left (agent-side setup, time between hops), so the phases add up to `total`.
 * `cutIn` is the phase the last hop was in when the run stopped without a response.
 */
export function runPhases(
  runStart: number,
  hops: HopMarks[],
  runEnd: number,
  cutIn: RequestPhase | null = null,
): TimingPhases {
  const sum = { dns: 0, tcp: 0, tls: 0, firstByte: 0, download: 0 };
  const last = hops.length - 1;
  for (const [i, hop] of hops.entries()) {
    const p = hopPhases(i === last && cutIn !== null ? cutHop(hop, cutIn, runEnd) : hop);
    sum.dns += p.dns;
    sum.tcp += p.tcp;
    sum.tls += p.tls;
    sum.firstByte += p.firstByte;
    sum.download += p.download;
  }
  const total = nonNeg(runEnd - runStart);
  const busy = sum.dns + sum.tcp + sum.tls + sum.firstByte + sum.download;
  return {
    wait: round(nonNeg(total - busy)),
    dns: round(sum.dns),
    tcp: round(sum.tcp),
    tls: round(sum.tls),
    firstByte: round(sum.firstByte),
    download: round(sum.download),
    total: round(total),
  };
}

const TIMING_EVENTS = ['socket', 'lookup', 'connect', 'secureConnect', 'response', 'end'] as const;

/**
 * Cumulative timestamps of the last hop, in ms since the run started (so after redirects they
 * include the earlier hops). Events the hop never reached are left out; `start` is always 0.
 */
export function runTimings(runStart: number, last: HopMarks | undefined): Record<string, number> {
  const out: Record<string, number> = { start: 0 };
  if (!last) return out;
  for (const k of TIMING_EVENTS) {
    const v = last[k];
    if (v !== undefined) out[k] = round(nonNeg(v - runStart));
  }
  return out;
}
