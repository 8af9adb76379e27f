/** DNS checks (reference: ChecksV1DnsMonitorCreate, ChecksV1DnsRequest, ChecksV1DnsAssertion). */
import { type Static, Type } from 'typebox';
import { ASSERTION_COMPARISONS, assertionOf, evaluated } from './assertions.ts';
import { checkDefinition, responseTimeThresholds } from './common.ts';
import { Nullable } from './schema.ts';

/** The reference's eight record types plus PTR, SRV and CAA. */
export const DNS_RECORD_TYPES = ['A', 'AAAA', 'CNAME', 'MX', 'TXT', 'SOA', 'NS', 'HTTPS', 'PTR', 'SRV', 'CAA'] as const;
export type DnsRecordType = (typeof DNS_RECORD_TYPES)[number];
export const DNS_PROTOCOLS = ['UDP', 'TCP'] as const;
export type DnsProtocol = (typeof DNS_PROTOCOLS)[number];
export const DNS_ASSERTION_SOURCES = ['RESPONSE_TIME', 'RESPONSE_CODE', 'TEXT_ANSWER', 'JSON_ANSWER'] as const;
export type DnsAssertionSource = (typeof DNS_ASSERTION_SOURCES)[number];
/** DNS assertions take all fourteen comparisons. */
export const DnsAssertion = assertionOf(DNS_ASSERTION_SOURCES, ASSERTION_COMPARISONS);
export type DnsAssertion = Static<typeof DnsAssertion>;

/** The Outpost extensions of a DNS request, echoed by its result. */
const queryFlags = {
  /** Outpost extension: the RD bit of the query; absent means true. */
  recursionDesired: Type.Optional(Type.Boolean()),
  /** Outpost extension: send an EDNS(0) OPT record (4096-byte UDP payload); absent means false. */
  edns: Type.Optional(Type.Boolean()),
  /** Outpost extension: set the DNSSEC OK (DO) bit; implies EDNS; absent means false. */
  dnssecOk: Type.Optional(Type.Boolean()),
};

export const DnsRequest = Type.Object({
  query: Type.String(),
  recordType: Type.Enum(DNS_RECORD_TYPES),
  /** Address or host name of the server to ask; null asks the system's configured resolver. */
  nameServer: Nullable(Type.String()),
  /** Server port; null means 53. */
  port: Nullable(Type.Number()),
  protocol: Type.Enum(DNS_PROTOCOLS),
  assertions: Type.Array(DnsAssertion),
  ...queryFlags,
});
export type DnsRequest = Static<typeof DnsRequest>;

export const DnsCheckDefinition = checkDefinition('DNS', { request: DnsRequest, ...responseTimeThresholds });
export type DnsCheckDefinition = Static<typeof DnsCheckDefinition>;

/** One resource record of a DNS answer; `data` is its presentation form (as `dig` prints it). */
export const DnsAnswerRecord = Type.Object({
  name: Type.String(),
  type: Type.String(),
  ttl: Type.Number(),
  data: Type.String(),
});
export type DnsAnswerRecord = Static<typeof DnsAnswerRecord>;

const DnsResponse = Type.Object({
  /** Response code name: NOERROR, NXDOMAIN, SERVFAIL, REFUSED, ... */
  rcode: Type.String(),
  answers: Type.Array(DnsAnswerRecord),
  authorities: Type.Array(DnsAnswerRecord),
  additionals: Type.Array(DnsAnswerRecord),
  /** The answer section as text, one record a line (`name ttl IN type data`), what TEXT_ANSWER sees. */
  textAnswer: Type.String(),
  flags: Type.Object({
    authoritative: Type.Boolean(),
    truncated: Type.Boolean(),
    recursionDesired: Type.Boolean(),
    recursionAvailable: Type.Boolean(),
    /** AD: the server validated the answer with DNSSEC. */
    authenticData: Type.Optional(Type.Boolean()),
    /** CD: checking disabled, as echoed by the server. */
    checkingDisabled: Type.Optional(Type.Boolean()),
  }),
  /** The answer's EDNS OPT record; null when the server sent none. */
  edns: Type.Optional(
    Nullable(Type.Object({ udpPayloadSize: Type.Number(), version: Type.Number(), dnssecOk: Type.Boolean() })),
  ),
  /** The server that answered and how. */
  server: Type.Object({ address: Type.String(), port: Type.Number() }),
  protocol: Type.Enum(DNS_PROTOCOLS),
  /** A UDP answer came back truncated and the query was asked again over TCP. */
  fellBackToTcp: Type.Boolean(),
  timingPhases: Type.Object({ dns: Type.Number(), query: Type.Number(), total: Type.Number() }),
});

/** `details.dnsCheckResult`. Times are milliseconds. */
export const DnsCheckResult = Type.Object({
  request: Type.Object({
    query: Type.String(),
    recordType: Type.Enum(DNS_RECORD_TYPES),
    nameServer: Nullable(Type.String()),
    port: Type.Number(),
    protocol: Type.Enum(DNS_PROTOCOLS),
    ...queryFlags,
  }),
  response: Nullable(DnsResponse),
  assertions: Type.Array(evaluated(DnsAssertion)),
  requestError: Nullable(Type.String()),
});
export type DnsCheckResult = Static<typeof DnsCheckResult>;
