/** TCP checks (reference: ChecksV1TcpCheckCreate, ChecksV1TcpRequest, ChecksV1TcpAssertion). */
import { type Static, Type } from 'typebox';
import { assertionOf, evaluated } from './assertions.ts';
import { checkDefinition, IpFamily, responseTimeThresholds } from './common.ts';
import { SslCertificateInfo } from './monitors.ts';
import { Nullable } from './schema.ts';

export const TCP_ASSERTION_SOURCES = ['RESPONSE_DATA', 'RESPONSE_TIME'] as const;
export type TcpAssertionSource = (typeof TCP_ASSERTION_SOURCES)[number];
export const TCP_ASSERTION_COMPARISONS = [
  'EQUALS',
  'NOT_EQUALS',
  'IS_EMPTY',
  'NOT_EMPTY',
  'LESS_THAN',
  'GREATER_THAN',
  'CONTAINS',
  'NOT_CONTAINS',
] as const;
export type TcpAssertionComparison = (typeof TCP_ASSERTION_COMPARISONS)[number];
export const TcpAssertion = assertionOf(TCP_ASSERTION_SOURCES, TCP_ASSERTION_COMPARISONS);
export type TcpAssertion = Static<typeof TcpAssertion>;

/** The Outpost extensions of a TCP request, echoed by its result. */
const tlsSwitches = {
  /** Outpost extension: a TLS handshake right after connecting; data and the answer go over TLS. */
  tls: Type.Optional(Type.Boolean()),
  /** Outpost extension: the name sent in SNI and checked against the certificate; null: hostname. */
  tlsServerName: Type.Optional(Nullable(Type.String())),
  /** Outpost extension: an untrusted chain or a certificate for another host does not fail the run. */
  skipSSL: Type.Optional(Type.Boolean()),
};

export const TcpRequest = Type.Object({
  hostname: Type.String(),
  port: Type.Number(),
  /** Sent once the connection is up; null sends nothing and reads whatever the server says first. */
  data: Nullable(Type.String()),
  /** The preferred family; the other one is tried when it has no address or is unreachable. */
  ipFamily: IpFamily,
  assertions: Type.Array(TcpAssertion),
  ...tlsSwitches,
});
export type TcpRequest = Static<typeof TcpRequest>;

export const TcpCheckDefinition = checkDefinition('TCP', { request: TcpRequest, ...responseTimeThresholds });
export type TcpCheckDefinition = Static<typeof TcpCheckDefinition>;

/*
 * The reference's CheckResult has no field for TCP, DNS or ICMP results, so they travel in the
 * result's `details` under these names: details.tcpCheckResult, details.dnsCheckResult,
 * details.icmpCheckResult (see RunDetails in protocol.ts). Each follows CheckResultAPI's layout:
 * request, response (null when none came), assertions, requestError.
 */

/** `tcpCheckResult.tls`: what the handshake of a TCP check with `request.tls` showed. */
export const TcpTlsDetails = Type.Object({
  /** Negotiated version as Node names it: TLSv1.2, TLSv1.3. */
  protocol: Nullable(Type.String()),
  /** IANA name of the negotiated cipher suite. */
  cipher: Nullable(Type.String()),
  /** The name checked against the certificate, and sent in SNI unless it is an IP address. */
  serverName: Type.String(),
  handshakeTimeMs: Type.Number(),
  chainTrusted: Type.Boolean(),
  /** OpenSSL's code when the chain is not trusted (SELF_SIGNED_CERT_IN_CHAIN, ...). */
  chainTrustReason: Nullable(Type.String()),
  hostnameVerified: Type.Boolean(),
  hostnameDetail: Nullable(Type.String()),
  /** The server's (leaf) certificate; null when it sent none. */
  certificate: Nullable(SslCertificateInfo),
});
export type TcpTlsDetails = Static<typeof TcpTlsDetails>;

/** Milliseconds of each phase; `tls` is there for a TLS check only. */
export const TcpTimingPhases = Type.Object({
  dns: Type.Number(),
  connect: Type.Number(),
  tls: Type.Optional(Type.Number()),
  data: Type.Number(),
  total: Type.Number(),
});
export type TcpTimingPhases = Static<typeof TcpTimingPhases>;

/** `details.tcpCheckResult`. Times are milliseconds. */
export const TcpCheckResult = Type.Object({
  request: Type.Object({
    hostname: Type.String(),
    port: Type.Number(),
    ipFamily: IpFamily,
    data: Nullable(Type.String()),
    ...tlsSwitches,
  }),
  response: Nullable(
    Type.Object({
      /** What the server sent (UTF-8, invalid bytes replaced), cut at the documented cap. */
      data: Type.String(),
      dataTruncated: Type.Boolean(),
      bytesReceived: Type.Number(),
      remoteAddress: Type.String(),
      remotePort: Type.Number(),
      family: IpFamily,
      timingPhases: TcpTimingPhases,
    }),
  ),
  /** Present for a TLS check once the handshake completed, also when verification then failed it. */
  tls: Type.Optional(Nullable(TcpTlsDetails)),
  assertions: Type.Array(evaluated(TcpAssertion)),
  requestError: Nullable(Type.String()),
});
export type TcpCheckResult = Static<typeof TcpCheckResult>;
