/**
 * The DNS check runner, in the manner of blackbox_exporter's DNS prober: one query for the check's
 * name and record type to its name server (or the system's, see dns/system-resolver.ts) over UDP or
 * TCP; a truncated UDP answer is asked again over TCP. The answer (rcode, records, text form) is
 * checked against RESPONSE_TIME, RESPONSE_CODE, TEXT_ANSWER and JSON_ANSWER assertions and the
 * response-time limits. As in the reference, an error return code (anything but NOERROR) fails the run
 * unless a RESPONSE_CODE assertion says what is expected, and shouldFail excuses it.
 *
 * Assertion sources: RESPONSE_TIME is the total time in ms; RESPONSE_CODE the rcode's name
 * (NOERROR, NXDOMAIN, SERVFAIL, REFUSED, ...); TEXT_ANSWER the answer section as dig prints it;
 * JSON_ANSWER a JSONPath (`property`) into the result's `response` object ($.rcode,
 * $.answers[0].data, $.flags.authoritative, ...).
 *
 * A name server given by name is resolved like an API check's host (USE_OS_DNS_RESOLVER decides
 * how); that time is the `dns` phase. A PTR query for an IP address asks for its reverse name.
 *
 * Outpost extensions switch the query: `recursionDesired` (RD bit, on unless false), `edns` (an OPT
 * record advertising a 4096-byte UDP payload) and `dnssecOk` (the DO bit, which implies EDNS). The
 * result's flags carry the answer's AA, TC, RD, RA, AD and CD bits, and `edns` its OPT record.
 */
import { randomInt } from 'node:crypto';
import net from 'node:net';
import dnsPacket, { type Answer, type DecodedPacket, type Packet, type RecordType } from 'dns-packet';
import type { DnsAssertion, DnsCheckDefinition, DnsCheckResult, DnsProtocol } from '../../shared/checks/types.ts';
import { AssertionError, evaluateAssertionsBy, selectJson } from './api/assertions.ts';
import { resolveHost } from './api/connect.ts';
import { CANCELLED, type RequestPhase, describeRequestError, isTargetError } from './api/errors.ts';
import { reverseName, textAnswer, toRecord, wireType } from './dns/records.ts';
import { systemNameServer } from './dns/system-resolver.ts';
import { DnsProtocolError, type DnsServer, queryTcp, queryUdp } from './dns/transport.ts';
import { startRunSignal } from './net/run-signal.ts';
import { finishRun, roundMs } from './net/verdict.ts';
import type { CheckContext, CheckOutcome, CheckRunner } from './runner.ts';

export const DNS_DEFAULT_PORT = 53;

type DnsResponse = NonNullable<DnsCheckResult['response']>;

function dnsActual(a: DnsAssertion, response: DnsResponse, responseTime: number): unknown {
  switch (a.source) {
    case 'RESPONSE_TIME':
      return responseTime;
    case 'RESPONSE_CODE':
      return response.rcode;
    case 'TEXT_ANSWER':
      return response.textAnswer;
    case 'JSON_ANSWER':
      return selectJson(response, a.property ?? '');
    default:
      throw new AssertionError(`unknown source "${String(a.source)}"`);
  }
}

const serverText = (s: { address: string; port: number }): string =>
  s.address.includes(':') ? `[${s.address}]:${s.port}` : `${s.address}:${s.port}`;

/** Words for what went wrong talking to the server; DNS names and refusals as API checks word them. */
function describeDnsError(
  err: unknown,
  server: DnsServer | null,
  host: string,
  port: number,
  phase: RequestPhase,
  protocol: DnsProtocol,
): string {
  if (err instanceof DnsProtocolError)
    return `Invalid DNS answer from ${server ? serverText(server) : host}: ${err.message}`;
  const code = (err as { code?: unknown }).code;
  if (code === 'DNS_TCP_CLOSED')
    return `DNS server ${server ? serverText(server) : host} closed the TCP connection before answering`;
  const text = describeRequestError(err, { host, port, address: server?.address ?? null, phase });
  return phase === 'dns' ? `${text} (the name server's own name)` : `${text} (${protocol})`;
}

/** Why the answer fails by its return code alone (the reference's default), else null. */
function errorReturnCode(response: DnsResponse | null, assertions: readonly DnsAssertion[]): string | null {
  if (!response || response.rcode === 'NOERROR') return null;
  if (assertions.some((a) => a.source === 'RESPONSE_CODE')) return null;
  return `DNS answer ${response.rcode}: an error return code fails the check unless a RESPONSE_CODE assertion expects it`;
}

/** The UDP payload size advertised with EDNS: the common 4096 (RFC 6891 6.2.5). */
export const EDNS_UDP_PAYLOAD_SIZE = 4096;

/** The switches of a query as the Outpost extensions set them (absent: RD on, no EDNS). */
export function querySwitches(req: DnsCheckDefinition['request']): {
  recursionDesired: boolean;
  edns: boolean;
  dnssecOk: boolean;
} {
  const dnssecOk = req.dnssecOk === true;
  return { recursionDesired: req.recursionDesired !== false, edns: req.edns === true || dnssecOk, dnssecOk };
}

type DnsQuery = Packet & { id: number };

function buildQuery(check: DnsCheckDefinition): DnsQuery {
  const { query, recordType } = check.request;
  const switches = querySwitches(check.request);
  const literal = net.isIP(query);
  const name = recordType === 'PTR' && literal !== 0 ? reverseName(query, literal === 6 ? 6 : 4) : query;
  // The DO bit lives in the OPT pseudo-record's flags (RFC 3225), so asking for it means sending EDNS.
  const opt = {
    type: 'OPT',
    name: '.',
    udpPayloadSize: EDNS_UDP_PAYLOAD_SIZE,
    flags: switches.dnssecOk ? dnsPacket.DNSSEC_OK : 0,
  };
  return {
    type: 'query',
    id: randomInt(0, 0x10000),
    flags: switches.recursionDesired ? dnsPacket.RECURSION_DESIRED : 0,
    questions: [{ type: wireType(recordType) as RecordType, name, class: 'IN' }],
    ...(switches.edns ? { additionals: [opt as unknown as Answer] } : {}),
  };
}

/** The answer's EDNS OPT record (udpPayloadSize, version, DO bit), or null when it has none. */
function answerEdns(answer: DecodedPacket): DnsResponse['edns'] {
  const opt = (answer.additionals ?? []).find((a) => a.type === 'OPT') as
    | (Answer & { udpPayloadSize?: number; ednsVersion?: number; flag_do?: boolean })
    | undefined;
  if (!opt) return null;
  return { udpPayloadSize: opt.udpPayloadSize ?? 0, version: opt.ednsVersion ?? 0, dnssecOk: opt.flag_do === true };
}

/**
 * How long a run waits: past its maxResponseTime a DNS check fails anyway, so a silent server is
 * given up on then rather than at the run's (much longer) time limit, as TCP checks do.
 */
function waitLimit(check: DnsCheckDefinition, ctx: CheckContext): { timeoutMs: number; byMaxResponseTime: boolean } {
  const max = check.maxResponseTime;
  if (max > 0 && (ctx.timeoutMs <= 0 || max < ctx.timeoutMs)) return { timeoutMs: max, byMaxResponseTime: true };
  return { timeoutMs: ctx.timeoutMs, byMaxResponseTime: false };
}

function timeoutText(
  limit: ReturnType<typeof waitLimit>,
  phase: RequestPhase,
  serverHost: string,
  server: DnsServer | null,
  protocol: DnsProtocol,
): string {
  const ms = Math.round(limit.timeoutMs);
  if (limit.byMaxResponseTime) {
    const within = `within the check's maxResponseTime (${ms} ms)`;
    return phase === 'dns'
      ? `The name server "${serverHost}" did not resolve ${within}`
      : `No answer from ${server ? serverText(server) : serverHost} over ${protocol} ${within}`;
  }
  return phase === 'dns'
    ? `Timed out after ${ms} ms while resolving the name server "${serverHost}"`
    : `Timed out after ${ms} ms waiting for an answer from ${server ? serverText(server) : serverHost} over ${protocol}`;
}

/** How far a DNS run has got; each phase moves it on, and a failure is read from where it stopped. */
interface DnsRun {
  /** 'dns' while the name server's own name is resolved, then 'response' while it is asked. */
  phase: RequestPhase;
  serverHost: string;
  server: DnsServer | null;
  port: number;
  /** When the name server's address was known (the end of the `dns` phase). */
  resolvedAt: number;
  protocol: DnsProtocol;
  fellBackToTcp: boolean;
  answer: DecodedPacket | null;
  requestError: string | null;
}

/** Finds the name server's address: the check's (resolved if it is a name) or the system's. */
async function resolveServer(
  s: DnsRun,
  req: DnsCheckDefinition['request'],
  ctx: CheckContext,
  signal: AbortSignal,
): Promise<DnsServer> {
  s.serverHost = req.nameServer ? req.nameServer.trim() : await systemNameServer();
  const { addresses } = await resolveHost(s.serverHost, 4, ctx.useOsDnsResolver, signal);
  const first = addresses[0];
  if (!first) throw Object.assign(new Error(`no address for ${s.serverHost}`), { code: 'NO_ADDRESS' });
  s.server = { address: first.address, port: s.port, family: first.family };
  s.resolvedAt = performance.now();
  s.phase = 'response';
  return s.server;
}

/** Sends the query and waits for the answer; a truncated UDP answer is asked again over TCP. */
async function askServer(s: DnsRun, server: DnsServer, query: DnsQuery, signal: AbortSignal): Promise<void> {
  s.answer = s.protocol === 'TCP' ? await queryTcp(server, query, signal) : await queryUdp(server, query, signal);
  if (s.protocol === 'UDP' && s.answer.flag_tc) {
    // The whole answer did not fit a UDP datagram: ask again where it fits (RFC 7766).
    s.protocol = 'TCP';
    s.fellBackToTcp = true;
    s.answer = await queryTcp(server, query, signal);
  }
}

/** Resolves the server and asks it, within the run's limit; every failure of the target becomes requestError. */
async function queryServer(check: DnsCheckDefinition, ctx: CheckContext, t0: number): Promise<DnsRun> {
  const req = check.request;
  const limit = waitLimit(check, ctx);
  const run = startRunSignal({ signal: ctx.signal, timeoutMs: limit.timeoutMs }, t0);
  const s: DnsRun = {
    phase: 'dns',
    serverHost: req.nameServer ?? '',
    server: null,
    port: req.port ?? DNS_DEFAULT_PORT,
    resolvedAt: t0,
    protocol: req.protocol === 'TCP' ? 'TCP' : 'UDP',
    fellBackToTcp: false,
    answer: null,
    requestError: null,
  };
  const query = buildQuery(check);
  try {
    const server = await resolveServer(s, req, ctx, run.signal);
    await askServer(s, server, query, run.signal);
  } catch (err) {
    s.answer = null;
    if (run.abortKind === null && !isTargetError(err)) throw err;
    if (run.abortKind === null)
      s.requestError = describeDnsError(err, s.server, s.serverHost, s.port, s.phase, s.protocol);
  } finally {
    run.dispose();
  }
  if (run.abortKind !== null && s.answer === null) {
    s.requestError =
      run.abortKind === 'cancelled' ? CANCELLED : timeoutText(limit, s.phase, s.serverHost, s.server, s.protocol);
  }
  return s;
}

/** The phase the run ended in (answered, failed or timed out) carries the time up to the end. */
function dnsTimingPhases(s: DnsRun, t0: number, tEnd: number): DnsResponse['timingPhases'] {
  return {
    dns: roundMs((s.phase === 'dns' ? tEnd : s.resolvedAt) - t0),
    query: roundMs(s.phase === 'dns' ? 0 : tEnd - s.resolvedAt),
    total: roundMs(tEnd - t0),
  };
}

const records = (list: DecodedPacket['answers']) =>
  (list ?? []).map(toRecord).filter((r): r is NonNullable<typeof r> => r !== null);

/** The answer as the result shows it and the assertions read it. */
function readAnswer(
  answer: DecodedPacket,
  s: DnsRun,
  server: DnsServer,
  timingPhases: DnsResponse['timingPhases'],
): DnsResponse {
  return {
    rcode: String((answer as DecodedPacket & { rcode?: unknown }).rcode ?? 'NOERROR'),
    answers: records(answer.answers),
    authorities: records(answer.authorities),
    additionals: records(answer.additionals),
    textAnswer: textAnswer(answer.answers ?? []),
    flags: {
      authoritative: answer.flag_aa,
      truncated: answer.flag_tc,
      recursionDesired: answer.flag_rd,
      recursionAvailable: answer.flag_ra,
      authenticData: answer.flag_ad,
      checkingDisabled: answer.flag_cd,
    },
    edns: answerEdns(answer),
    server: { address: server.address, port: server.port },
    protocol: s.protocol,
    fellBackToTcp: s.fellBackToTcp,
    timingPhases,
  };
}

async function runDnsCheck(check: DnsCheckDefinition, ctx: CheckContext): Promise<CheckOutcome> {
  const startedAt = new Date();
  const t0 = performance.now();
  const req = check.request;
  const s = await queryServer(check, ctx, t0);
  const tEnd = performance.now();
  const stoppedAt = new Date();
  const timingPhases = dnsTimingPhases(s, t0, tEnd);
  const responseTime = timingPhases.total;
  const { answer, server, requestError } = s;
  const response = answer && server ? readAnswer(answer, s, server, timingPhases) : null;
  const assertions = response ? evaluateAssertionsBy(req.assertions, (a) => dnsActual(a, response, responseTime)) : [];
  const dnsCheckResult: DnsCheckResult = {
    request: {
      query: req.query,
      recordType: req.recordType,
      nameServer: req.nameServer,
      port: s.port,
      protocol: req.protocol,
      ...querySwitches(req),
    },
    response,
    assertions,
    requestError,
  };
  return finishRun({
    check,
    ctx,
    label: 'dns',
    startedAt,
    stoppedAt,
    measured: {
      requestError,
      errorAnswer: errorReturnCode(response, req.assertions),
      answered: response !== null,
      assertions,
      responseTime,
      shouldFailExcuses: 'errorAnswer',
    },
    logged: { rcode: response?.rcode ?? null },
    details: () => ({
      dnsCheckResult,
      ...(response ? {} : { timingPhases, server: server ? { address: server.address, port: server.port } : null }),
    }),
  });
}

/** Runs DNS checks (one query, UDP with TCP fallback or TCP); registered in ./index.ts. */
export const dnsCheckRunner: CheckRunner<DnsCheckDefinition> = {
  checkType: 'DNS',
  run: runDnsCheck,
};
