/**
 * URL and SSL monitors (reference: ChecksV1UrlMonitorCreate, ChecksV1SslMonitorCreate, CheckResultSsl):
 * their definitions as a job carries them and the SSL monitor's result. A URL monitor is a GET-only
 * API check with status-code and response-time assertions, run by the API engine, so its result is an
 * ordinary `apiCheckResult`; an SSL monitor's result travels in `details.sslCheckResult`.
 */
import { type Static, type TSchema, Type } from 'typebox';
import { assertionOf, evaluated } from './assertions.ts';
import { checkDefinition, IpFamily, responseTimeThresholds } from './common.ts';
import { Nullable } from './schema.ts';

// ---------------------------------------------------------------------------------------------
// URL monitors

/** The reference allows STATUS_CODE only; RESPONSE_TIME is ours (the API engine measures it anyway). */
export const URL_ASSERTION_SOURCES = ['STATUS_CODE', 'RESPONSE_TIME'] as const;
export type UrlAssertionSource = (typeof URL_ASSERTION_SOURCES)[number];
export const URL_ASSERTION_COMPARISONS = ['EQUALS', 'NOT_EQUALS', 'LESS_THAN', 'GREATER_THAN'] as const;
export type UrlAssertionComparison = (typeof URL_ASSERTION_COMPARISONS)[number];
export const UrlAssertion = assertionOf(URL_ASSERTION_SOURCES, URL_ASSERTION_COMPARISONS);
export type UrlAssertion = Static<typeof UrlAssertion>;

export const UrlRequest = Type.Object({
  /** Always GET: a URL monitor sends no body, headers or query of its own. */
  method: Type.Literal('GET'),
  url: Type.String(),
  followRedirects: Type.Boolean(),
  skipSSL: Type.Boolean(),
  ipFamily: IpFamily,
  assertions: Type.Array(UrlAssertion),
});
export type UrlRequest = Static<typeof UrlRequest>;

export const UrlCheckDefinition = checkDefinition('URL', { request: UrlRequest, ...responseTimeThresholds });
export type UrlCheckDefinition = Static<typeof UrlCheckDefinition>;

// ---------------------------------------------------------------------------------------------
// SSL monitors

export const SSL_ASSERTION_SOURCES = [
  'CERTIFICATE',
  'CONNECTION',
  'RESPONSE_TIME',
  'JSON_RESPONSE',
  'TEXT_RESPONSE',
] as const;
export type SslAssertionSource = (typeof SSL_ASSERTION_SOURCES)[number];
/** The union of the comparisons the reference's docs list per property type (docs/checks.md "SSL monitors"). */
export const SSL_ASSERTION_COMPARISONS = [
  'EQUALS',
  'NOT_EQUALS',
  'GREATER_THAN',
  'LESS_THAN',
  'CONTAINS',
  'NOT_CONTAINS',
  'IS_EMPTY',
  'NOT_EMPTY',
  'IS_NULL',
  'NOT_NULL',
] as const;
export type SslAssertionComparison = (typeof SSL_ASSERTION_COMPARISONS)[number];
export const SslAssertion = assertionOf(SSL_ASSERTION_SOURCES, SSL_ASSERTION_COMPARISONS);
export type SslAssertion = Static<typeof SslAssertion>;

/** CERTIFICATE assertion properties (fields of the leaf certificate). */
export const SSL_CERTIFICATE_PROPERTIES = [
  'daysUntilExpiry',
  'subjectCN',
  'issuerCN',
  'serialNumber',
  'fingerprintSha256',
  'issuerFingerprintSha256',
  'keySizeBits',
  'keyAlgorithm',
  'signatureAlgorithm',
  'sans',
  'selfSigned',
  'isCA',
] as const;
/** CONNECTION assertion properties (the handshake). ocspStapled and ocspStatus are not measured yet. */
export const SSL_CONNECTION_PROPERTIES = [
  'tlsVersion',
  'cipherSuite',
  'hostnameVerified',
  'chainTrusted',
  'resolvedIp',
] as const;

export const TLS_VERSIONS = ['TLS1.2', 'TLS1.3'] as const;
export type TlsVersionName = (typeof TLS_VERSIONS)[number];
export const BASELINE_SEVERITIES = ['fail', 'degrade', 'ignore'] as const;
export type BaselineSeverity = (typeof BASELINE_SEVERITIES)[number];

const Severity = Type.Enum(BASELINE_SEVERITIES);
const TlsVersion = Type.Enum(TLS_VERSIONS);
/** A baseline rule with a threshold of its own. */
const ruleWith = <V extends TSchema>(value: V) => Type.Object({ value, severity: Severity });
const severityOnly = Type.Object({ severity: Severity });

/** The security-baseline rules the agent evaluates (the reference's other rules are stored, not run). */
export const SslSecurityBaseline = Type.Object({
  enabled: Type.Boolean(),
  minTLSVersion: ruleWith(TlsVersion),
  minKeySizeBits: ruleWith(Type.Number()),
  weakSignatureAlgorithm: severityOnly,
  weakCipherSuite: severityOnly,
  recommendedTLSVersion: ruleWith(TlsVersion),
  recommendedKeySizeBits: ruleWith(Type.Number()),
});
export type SslSecurityBaseline = Static<typeof SslSecurityBaseline>;
/** The names of the baseline's rules (all but `enabled`). */
export const SSL_BASELINE_RULES = [
  'minTLSVersion',
  'minKeySizeBits',
  'weakSignatureAlgorithm',
  'weakCipherSuite',
  'recommendedTLSVersion',
  'recommendedKeySizeBits',
] as const satisfies ReadonlyArray<keyof Omit<SslSecurityBaseline, 'enabled'>>;

export const SslConfig = Type.Object({
  hostname: Type.String(),
  port: Type.Number(),
  /** The SNI name to send; null sends the hostname (none for an IP address). */
  serverName: Nullable(Type.String()),
  ipFamily: IpFamily,
  /** Do not fail on an untrusted chain (chainTrusted is still reported). */
  skipChainValidation: Type.Boolean(),
  handshakeTimeoutMs: Type.Number(),
  /** Fewer days left than this: degraded. Expired: failed. */
  alertDaysBeforeExpiry: Type.Number(),
  securityBaseline: SslSecurityBaseline,
});
export type SslConfig = Static<typeof SslConfig>;

export const SslRequest = Type.Object({
  sslConfig: SslConfig,
  assertions: Type.Array(SslAssertion),
});
export type SslRequest = Static<typeof SslRequest>;

export const SslCheckDefinition = checkDefinition('SSL', { request: SslRequest, ...responseTimeThresholds });
export type SslCheckDefinition = Static<typeof SslCheckDefinition>;

/** One certificate of the chain the server presented (leaf first). Dates are ISO strings. */
export const SslCertificateInfo = Type.Object({
  subjectCN: Nullable(Type.String()),
  subject: Type.String(),
  issuerCN: Nullable(Type.String()),
  issuer: Type.String(),
  serialNumber: Nullable(Type.String()),
  validFrom: Nullable(Type.String()),
  validTo: Nullable(Type.String()),
  daysUntilExpiry: Nullable(Type.Number()),
  fingerprintSha256: Nullable(Type.String()),
  keyAlgorithm: Nullable(Type.String()),
  keySizeBits: Nullable(Type.Number()),
  signatureAlgorithm: Nullable(Type.String()),
  sans: Type.Array(Type.String()),
  selfSigned: Type.Boolean(),
  isCA: Type.Boolean(),
});
export type SslCertificateInfo = Static<typeof SslCertificateInfo>;

export const SslBaselineRule = Type.Object({
  rule: Type.Enum(SSL_BASELINE_RULES),
  severity: Severity,
  passed: Type.Boolean(),
  detail: Type.String(),
});
export type SslBaselineRule = Static<typeof SslBaselineRule>;

const BaselineVerdict = Type.Enum(['pass', 'warn', 'fail']);
const BaselineGrade = Type.Enum(['A-', 'B', 'F']);

const SslResponse = Type.Object({
  resolvedIp: Type.String(),
  protocol: Nullable(Type.String()),
  cipherSuite: Nullable(Type.String()),
  handshakeTimeMs: Type.Number(),
  hostnameVerified: Type.Boolean(),
  /** The verification error when not trusted, e.g. DEPTH_ZERO_SELF_SIGNED_CERT, CERT_HAS_EXPIRED. */
  chainTrustReason: Nullable(Type.String()),
  /** Why the host name does not match, from tls.checkServerIdentity. */
  hostnameDetail: Nullable(Type.String()),
  chainTrusted: Type.Boolean(),
  daysUntilExpiry: Nullable(Type.Number()),
  securityBaseline: Nullable(
    Type.Object({ verdict: BaselineVerdict, grade: BaselineGrade, rules: Type.Array(SslBaselineRule) }),
  ),
  certificate: Nullable(SslCertificateInfo),
  chain: Type.Array(SslCertificateInfo),
});

/** `details.sslCheckResult`, the reference's CheckResultSsl. Times are milliseconds. */
export const SslCheckResult = Type.Object({
  tlsVersion: Nullable(Type.String()),
  cipherSuite: Nullable(Type.String()),
  daysUntilExpiry: Nullable(Type.Number()),
  handshakeTimeMs: Nullable(Type.Number()),
  chainTrusted: Nullable(Type.Boolean()),
  hostnameVerified: Nullable(Type.Boolean()),
  /** pass, warn or fail; null when the baseline was skipped (disabled, or an earlier step failed). */
  baselineVerdict: Nullable(BaselineVerdict),
  baselineGrade: Nullable(BaselineGrade),
  /** dns, connect, timeout, handshake, hostname, chain, expired, baseline; null when it passed. */
  failureCategory: Nullable(Type.String()),
  requestError: Nullable(Type.String()),
  request: Type.Object({
    hostname: Type.String(),
    port: Type.Number(),
    serverName: Nullable(Type.String()),
    ipFamily: IpFamily,
  }),
  assertions: Type.Array(evaluated(SslAssertion)),
  response: Nullable(SslResponse),
});
export type SslCheckResult = Static<typeof SslCheckResult>;
