/**
 * URL and SSL monitors (reference: ChecksV1UrlMonitorCreate, ChecksV1SslMonitorCreate, CheckResultSsl):
 * their definitions as a job carries them and the SSL monitor's result. A URL monitor is a GET-only
 * API check with status-code and response-time assertions, run by the API engine, so its result is an
 * ordinary `apiCheckResult`; an SSL monitor's result travels in `details.sslCheckResult`.
 */
import type { AssertionOf, CheckBase, EvaluatedAssertion, IpFamily } from './types.ts';

// ---------------------------------------------------------------------------------------------
// URL monitors

/** The reference allows STATUS_CODE only; RESPONSE_TIME is ours (the API engine measures it anyway). */
export const URL_ASSERTION_SOURCES = ['STATUS_CODE', 'RESPONSE_TIME'] as const;
export type UrlAssertionSource = (typeof URL_ASSERTION_SOURCES)[number];
export const URL_ASSERTION_COMPARISONS = ['EQUALS', 'NOT_EQUALS', 'LESS_THAN', 'GREATER_THAN'] as const;
export type UrlAssertionComparison = (typeof URL_ASSERTION_COMPARISONS)[number];
export type UrlAssertion = AssertionOf<UrlAssertionSource, UrlAssertionComparison>;

export interface UrlRequest {
  /** Always GET: a URL monitor sends no body, headers or query of its own. */
  method: 'GET';
  url: string;
  followRedirects: boolean;
  skipSSL: boolean;
  ipFamily: IpFamily;
  assertions: UrlAssertion[];
}

export interface UrlCheckDefinition extends CheckBase {
  checkType: 'URL';
  request: UrlRequest;
  degradedResponseTime: number;
  maxResponseTime: number;
}

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
export type SslAssertion = AssertionOf<SslAssertionSource, SslAssertionComparison>;

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
export type BaselineSeverity = 'fail' | 'degrade' | 'ignore';

/** The security-baseline rules the agent evaluates (the reference's other rules are stored, not run). */
export interface SslSecurityBaseline {
  enabled: boolean;
  minTLSVersion: { value: TlsVersionName; severity: BaselineSeverity };
  minKeySizeBits: { value: number; severity: BaselineSeverity };
  weakSignatureAlgorithm: { severity: BaselineSeverity };
  weakCipherSuite: { severity: BaselineSeverity };
  recommendedTLSVersion: { value: TlsVersionName; severity: BaselineSeverity };
  recommendedKeySizeBits: { value: number; severity: BaselineSeverity };
}

export interface SslConfig {
  hostname: string;
  port: number;
  /** The SNI name to send; null sends the hostname (none for an IP address). */
  serverName: string | null;
  ipFamily: IpFamily;
  /** Do not fail on an untrusted chain (chainTrusted is still reported). */
  skipChainValidation: boolean;
  handshakeTimeoutMs: number;
  /** Fewer days left than this: degraded. Expired: failed. */
  alertDaysBeforeExpiry: number;
  securityBaseline: SslSecurityBaseline;
}

export interface SslRequest {
  sslConfig: SslConfig;
  assertions: SslAssertion[];
}

export interface SslCheckDefinition extends CheckBase {
  checkType: 'SSL';
  request: SslRequest;
  degradedResponseTime: number;
  maxResponseTime: number;
}

/** One certificate of the chain the server presented (leaf first). Dates are ISO strings. */
export interface SslCertificateInfo {
  subjectCN: string | null;
  subject: string;
  issuerCN: string | null;
  issuer: string;
  serialNumber: string | null;
  validFrom: string | null;
  validTo: string | null;
  daysUntilExpiry: number | null;
  fingerprintSha256: string | null;
  keyAlgorithm: string | null;
  keySizeBits: number | null;
  signatureAlgorithm: string | null;
  sans: string[];
  selfSigned: boolean;
  isCA: boolean;
}

export interface SslBaselineRule {
  rule: keyof Omit<SslSecurityBaseline, 'enabled'>;
  severity: BaselineSeverity;
  passed: boolean;
  detail: string;
}

/** `details.sslCheckResult`, the reference's CheckResultSsl. Times are milliseconds. */
export interface SslCheckResult {
  tlsVersion: string | null;
  cipherSuite: string | null;
  daysUntilExpiry: number | null;
  handshakeTimeMs: number | null;
  chainTrusted: boolean | null;
  hostnameVerified: boolean | null;
  /** pass, warn or fail; null when the baseline was skipped (disabled, or an earlier step failed). */
  baselineVerdict: 'pass' | 'warn' | 'fail' | null;
  baselineGrade: 'A-' | 'B' | 'F' | null;
  /** dns, connect, timeout, handshake, hostname, chain, expired, baseline; null when it passed. */
  failureCategory: string | null;
  requestError: string | null;
  request: { hostname: string; port: number; serverName: string | null; ipFamily: IpFamily };
  assertions: EvaluatedAssertion<SslAssertion>[];
  response: {
    resolvedIp: string;
    protocol: string | null;
    cipherSuite: string | null;
    handshakeTimeMs: number;
    hostnameVerified: boolean;
    /** The verification error when not trusted, e.g. DEPTH_ZERO_SELF_SIGNED_CERT, CERT_HAS_EXPIRED. */
    chainTrustReason: string | null;
    /** Why the host name does not match, from tls.checkServerIdentity. */
    hostnameDetail: string | null;
    chainTrusted: boolean;
    daysUntilExpiry: number | null;
    securityBaseline: { verdict: 'pass' | 'warn' | 'fail'; grade: 'A-' | 'B' | 'F'; rules: SslBaselineRule[] } | null;
    certificate: SslCertificateInfo | null;
    chain: SslCertificateInfo[];
  } | null;
}
