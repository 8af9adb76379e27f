/**
 * Check definitions as the agent receives them inside a job, and the result shapes it sends back.
 * Property names follow the published API (../shared/reference/openapi-subset.json) so that a
 * stored check and a job payload read the same way.
 */

/** Check types the protocol knows about. Issue-by-issue, more of them get a runner on the agent. */
export const CHECK_TYPES = ['API', 'TCP', 'DNS', 'ICMP', 'BROWSER', 'MULTI_STEP', 'PLAYWRIGHT'] as const;
export type CheckType = (typeof CHECK_TYPES)[number];

/**
 * Uptime checks are cheap protocol probes; heavy checks run user code or a browser. The agent keeps a
 * separate concurrency for each, so a slow browser check never delays a ping.
 */
export type CheckClass = 'uptime' | 'heavy';
export function checkClassOf(type: CheckType): CheckClass {
  return type === 'API' || type === 'TCP' || type === 'DNS' || type === 'ICMP' ? 'uptime' : 'heavy';
}

export interface KeyValue {
  key: string;
  value: string;
  locked?: boolean;
}

export const ASSERTION_SOURCES = ['STATUS_CODE', 'JSON_BODY', 'HEADERS', 'TEXT_BODY', 'RESPONSE_TIME'] as const;
export type AssertionSource = (typeof ASSERTION_SOURCES)[number];

export const ASSERTION_COMPARISONS = [
  'EQUALS',
  'NOT_EQUALS',
  'HAS_KEY',
  'NOT_HAS_KEY',
  'HAS_VALUE',
  'NOT_HAS_VALUE',
  'IS_EMPTY',
  'NOT_EMPTY',
  'GREATER_THAN',
  'LESS_THAN',
  'CONTAINS',
  'NOT_CONTAINS',
  'IS_NULL',
  'NOT_NULL',
] as const;
export type AssertionComparison = (typeof ASSERTION_COMPARISONS)[number];

export interface Assertion {
  source: AssertionSource;
  comparison: AssertionComparison;
  property: string;
  target: string;
  regex?: string | null;
}

export const HTTP_METHODS = ['GET', 'POST', 'PUT', 'HEAD', 'DELETE', 'PATCH'] as const;
export type HttpMethod = (typeof HTTP_METHODS)[number];
export const BODY_TYPES = ['JSON', 'FORM', 'RAW', 'GRAPHQL', 'NONE'] as const;
export type BodyType = (typeof BODY_TYPES)[number];

export interface ApiRequest {
  method: HttpMethod;
  url: string;
  followRedirects: boolean;
  skipSSL: boolean;
  ipFamily: 'IPv4' | 'IPv6';
  body: string;
  bodyType: BodyType;
  headers: KeyValue[];
  queryParameters: KeyValue[];
  assertions: Assertion[];
  basicAuth: { username: string; password: string } | null;
}

/** What every check in a job carries, whatever its type. */
export interface CheckBase {
  id: string;
  accountId: string;
  name: string;
  checkType: CheckType;
  /** Whether a failing run is the expected outcome (the reference's `shouldFail`). */
  shouldFail: boolean;
  runtimeId: string | null;
}

export interface ApiCheckDefinition extends CheckBase {
  checkType: 'API';
  request: ApiRequest;
  degradedResponseTime: number;
  maxResponseTime: number;
}

/** A check definition whose type has no runner in this version; the agent reports it plainly. */
export interface OtherCheckDefinition extends CheckBase {
  checkType: Exclude<CheckType, 'API'>;
  [key: string]: unknown;
}

export type CheckDefinition = ApiCheckDefinition | OtherCheckDefinition;

/** One evaluated assertion in a result: the definition plus what was seen and whether it held. */
export interface AssertionResult extends Assertion {
  actual: unknown;
  passed: boolean;
  /** Set when the assertion could not be evaluated at all (bad JSONPath, bad regex). */
  error?: string;
}

export interface TimingPhases {
  wait: number;
  dns: number;
  tcp: number;
  tls: number;
  firstByte: number;
  download: number;
  total: number;
}

/** The server certificate an API check saw on its https connection. Dates are ISO strings. */
export interface ApiTlsDetails {
  subjectCN: string | null;
  issuerCN: string | null;
  validFrom: string | null;
  validTo: string | null;
  /** Whole days until validTo (negative once expired). */
  daysRemaining: number | null;
  fingerprint256: string | null;
  /** Whether the chain and host name verified; false with skipSSL on a bad certificate. */
  authorized?: boolean;
  /** The verification error code when not authorized, e.g. DEPTH_ZERO_SELF_SIGNED_CERT. */
  authorizationError?: string | null;
  protocol?: string | null;
  cipher?: string | null;
}

/** `apiCheckResult` of a check result, as in the reference's CheckResultAPI. */
export interface ApiCheckResult {
  request: { method: string; url: string; data: string; headers: Record<string, string>; params: Record<string, string> };
  response: {
    status: number;
    statusText: string;
    body: string;
    /** True when the body was cut at the documented cap. */
    bodyTruncated?: boolean;
    /** The peer certificate of an https response (also present when skipSSL let a bad certificate through). */
    tls?: ApiTlsDetails;
    headers: Record<string, string> | null;
    timings: Record<string, number> | null;
    timingPhases: TimingPhases | null;
  } | null;
  assertions: AssertionResult[];
  requestError: string | null;
  jobLog: Record<string, unknown> | null;
  jobAssets: unknown[] | null;
}
