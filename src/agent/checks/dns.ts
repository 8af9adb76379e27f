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
import { decideVerdict, protocolOutcome, roundMs, verdictSettings } from './net/verdict.ts';
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

function buildQuery(check: DnsCheckDefinition): Packet & { id: number } {
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

async function runDnsCheck(check: DnsCheckDefinition, ctx: CheckContext): Promise<CheckOutcome> {
  const startedAt = new Date();
  const t0 = performance.now();
  const req = check.request;
  const limit = waitLimit(check, ctx);
  const run = startRunSignal({ signal: ctx.signal, timeoutMs: limit.timeoutMs }, t0);
  const port = req.port ?? DNS_DEFAULT_PORT;
  let phase: RequestPhase = 'dns';
  let server: DnsServer | null = null;
  let serverHost = req.nameServer ?? '';
  let resolvedAt = t0;
  let answer: DecodedPacket | null = null;
  let protocol: DnsProtocol = req.protocol === 'TCP' ? 'TCP' : 'UDP';
  let fellBackToTcp = false;
  let requestError: string | null = null;
  const query = buildQuery(check);
  try {
    serverHost = req.nameServer ? req.nameServer.trim() : await systemNameServer();
    const { addresses } = await resolveHost(serverHost, 4, ctx.useOsDnsResolver, run.signal);
    const first = addresses[0];
    if (!first) throw Object.assign(new Error(`no address for ${serverHost}`), { code: 'NO_ADDRESS' });
    server = { address: first.address, port, family: first.family };
    resolvedAt = performance.now();
    phase = 'response';
    answer = protocol === 'TCP' ? await queryTcp(server, query, run.signal) : await queryUdp(server, query, run.signal);
    if (protocol === 'UDP' && answer.flag_tc) {
      // The whole answer did not fit a UDP datagram: ask again where it fits (RFC 7766).
      protocol = 'TCP';
      fellBackToTcp = true;
      answer = await queryTcp(server, query, run.signal);
    }
  } catch (err) {
    answer = null;
    if (run.abortKind === null && !isTargetError(err)) throw err;
    if (run.abortKind === null) requestError = describeDnsError(err, server, serverHost, port, phase, protocol);
  } finally {
    run.dispose();
  }
  if (run.abortKind !== null && answer === null) {
    requestError = run.abortKind === 'cancelled' ? CANCELLED : timeoutText(limit, phase, serverHost, server, protocol);
  }
  const tEnd = performance.now();
  const stoppedAt = new Date();
  // The phase the run ended in (answered, failed or timed out) carries the time up to the end.
  const timingPhases = {
    dns: roundMs((phase === 'dns' ? tEnd : resolvedAt) - t0),
    query: roundMs(phase === 'dns' ? 0 : tEnd - resolvedAt),
    total: roundMs(tEnd - t0),
  };
  const responseTime = timingPhases.total;

  const records = (list: DecodedPacket['answers']) =>
    (list ?? []).map(toRecord).filter((r): r is NonNullable<typeof r> => r !== null);
  const response: DnsResponse | null =
    answer && server
      ? {
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
          protocol,
          fellBackToTcp,
          timingPhases,
        }
      : null;
  const assertions = response ? evaluateAssertionsBy(req.assertions, (a) => dnsActual(a, response, responseTime)) : [];
  const verdict = decideVerdict({
    requestError,
    errorAnswer: errorReturnCode(response, req.assertions),
    answered: response !== null,
    assertions,
    responseTime,
    ...verdictSettings(check),
    shouldFailExcuses: 'errorAnswer',
  });
  const dnsCheckResult: DnsCheckResult = {
    request: {
      query: req.query,
      recordType: req.recordType,
      nameServer: req.nameServer,
      port,
      protocol: req.protocol,
      ...querySwitches(req),
    },
    response,
    assertions,
    requestError,
  };
  ctx.log.debug(
    { requestError, rcode: response?.rcode ?? null, responseTime, hasFailures: verdict.hasFailures },
    'dns check done',
  );
  return protocolOutcome({
    startedAt,
    stoppedAt,
    responseTime,
    verdict,
    details: {
      dnsCheckResult,
      ...(response ? {} : { timingPhases, server: server ? { address: server.address, port: server.port } : null }),
    },
  });
}

/** Runs DNS checks (one query, UDP with TCP fallback or TCP); registered in ./index.ts. */
export const dnsCheckRunner: CheckRunner<DnsCheckDefinition> = {
  checkType: 'DNS',
  run: runDnsCheck,
};
