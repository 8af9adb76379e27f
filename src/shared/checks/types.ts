/**
 * Check definitions as the agent receives them inside a job, and the result shapes it sends back.
 * Property names follow the published API (../shared/reference/openapi-subset.json) so that a
 * stored check and a job payload read the same way.
 */
import type { SslCertificateInfo } from './monitors.ts';

/** Check types the protocol knows about. Issue-by-issue, more of them get a runner on the agent. */
export const CHECK_TYPES = ['API', 'TCP', 'DNS', 'ICMP', 'BROWSER', 'MULTI_STEP', 'PLAYWRIGHT', 'URL', 'SSL'] as const;
export type CheckType = (typeof CHECK_TYPES)[number];

/**
 * Uptime checks are cheap protocol probes; heavy checks run user code or a browser. The agent keeps a
 * separate concurrency for each, so a slow browser check never delays a ping.
 */
export type CheckClass = 'uptime' | 'heavy';
export function checkClassOf(type: CheckType): CheckClass {
  return type === 'API' || type === 'TCP' || type === 'DNS' || type === 'ICMP' || type === 'URL' || type === 'SSL'
    ? 'uptime'
    : 'heavy';
}

export interface KeyValue {
  key: string;
  value: string;
  locked?: boolean;
}

export const ASSERTION_SOURCES = ['STATUS_CODE', 'JSON_BODY', 'HEADERS', 'TEXT_BODY', 'RESPONSE_TIME'] as const;
/**
 * Outpost's own API assertion sources (the reference has none for these): values the result already
 * records, the HTTP version, the TLS protocol version and the certificate's days remaining.
 */
export const API_PROTOCOL_ASSERTION_SOURCES = [
  'HTTP_VERSION',
  'TLS_VERSION',
  'SSL_CERTIFICATE_DAYS_REMAINING',
] as const;
/** Every source an API check's assertion may use: the reference's and Outpost's own. */
export const API_ASSERTION_SOURCES = [...ASSERTION_SOURCES, ...API_PROTOCOL_ASSERTION_SOURCES] as const;
export type AssertionSource = (typeof API_ASSERTION_SOURCES)[number];
/** The comparisons a protocol source takes: its value is a version or a number (or null without TLS). */
export const API_PROTOCOL_ASSERTION_COMPARISONS = [
  'EQUALS',
  'NOT_EQUALS',
  'GREATER_THAN',
  'LESS_THAN',
  'IS_NULL',
  'NOT_NULL',
] as const;

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
  /**
   * Outpost extension: fail the run when the decoded response body is larger than this many bytes
   * (1 to API_MAX_RESPONSE_BYTES_LIMIT). Absent or null: no limit of the check's own (see docs/checks.md).
   */
  maxResponseBytes?: number | null;
}

/** The largest `maxResponseBytes` an API check may set: 16 MiB, the agent's hard read limit. */
export const API_MAX_RESPONSE_BYTES_LIMIT = 16 * 1024 * 1024;

/** The runtime of a check whose check, group and account name none. */
export const DEFAULT_RUNTIME_ID = '2026.04';

/** An environment variable as a job carries it (account, group and check levels already merged). */
export interface EnvironmentVariable {
  key: string;
  value: string;
  secret: boolean;
}

/** A check's own TLS material (docs/api.md "Client certificates"). */
export interface CheckTlsMaterial {
  /** PEM certificates trusted in addition to the agent's default roots (the check's sslCaBundle and the certificate's `ca`). */
  ca?: string[];
  /** The client certificate (PEM, chain allowed) and its private key, presented when the server asks. */
  cert?: string;
  key?: string;
  passphrase?: string | null;
  /** The id of the client certificate used, for the result's diagnosis. */
  clientCertificateId?: string;
}

/** What every check in a job carries, whatever its type. */
export interface CheckBase {
  id: string;
  accountId: string;
  name: string;
  checkType: CheckType;
  /** Whether a failing run is the expected outcome (the reference's `shouldFail`). */
  shouldFail: boolean;
  /**
   * The runtime user code runs in. For a check that runs user code (scripts, browser types) the
   * service resolves it: the check's, else its group's, else the account default (DEFAULT_RUNTIME_ID).
   * Other checks carry what the check or group names, or null (no runtime needed).
   */
  runtimeId: string | null;
  /** Set for a check in a group: the group's id (src/service/checks/group-merge.ts applies its settings). */
  groupId?: number;
  /**
   * TLS material of the check's own (API checks, URL and SSL monitors): a client certificate for
   * mutual TLS and/or extra trusted CAs. The key and passphrase are plain only in the job the agent
   * leases (sealed in the service's snapshot); the agent scrubs them from all it sends. Absent: none.
   */
  tls?: CheckTlsMaterial;
  /**
   * The variables user code sees in process.env: the account's, then the group's, then the check's
   * (a later level replaces an earlier one with the same key). Values are plain text in the job; the
   * agent scrubs every `secret` one from all it sends (src/agent/scrub/). Absent means none.
   */
  environmentVariables?: EnvironmentVariable[];
  /**
   * The setup code to run before the request, snippets already resolved to their code by the
   * service: the group's step, then the check's, each in its own block (see docs/secrets.md).
   * null or absent: no setup.
   */
  localSetupScript?: string | null;
  /** The teardown code, resolved likewise: the check's step, then the group's. null or absent: none. */
  localTearDownScript?: string | null;
  /** Setup and teardown code in run order (setup: group then check; teardown: check then group). */
  scripts?: { setup: ScriptRef[]; tearDown: ScriptRef[] };
}

/** A setup or teardown step: inline Node.js code or a snippet id, and whose it is. */
export interface ScriptRef {
  from: 'group' | 'check';
  script: string | null;
  snippetId: number | null;
}

export interface ApiCheckDefinition extends CheckBase {
  checkType: 'API';
  request: ApiRequest;
  degradedResponseTime: number;
  maxResponseTime: number;
}

export type IpFamily = 'IPv4' | 'IPv6';

/** An assertion of any check type: its own sources and comparisons, the shared property/target/regex. */
export interface AssertionOf<S extends string, C extends string = AssertionComparison> {
  source: S;
  comparison: C;
  property: string;
  target: string;
  regex?: string | null;
}

// ---------------------------------------------------------------------------------------------
// TCP (reference: ChecksV1TcpCheckCreate, ChecksV1TcpRequest, ChecksV1TcpAssertion)

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
export type TcpAssertion = AssertionOf<TcpAssertionSource, TcpAssertionComparison>;

export interface TcpRequest {
  hostname: string;
  port: number;
  /** Sent once the connection is up; null sends nothing and reads whatever the server says first. */
  data: string | null;
  /** The preferred family; the other one is tried when it has no address or is unreachable. */
  ipFamily: IpFamily;
  assertions: TcpAssertion[];
  /** Outpost extension: a TLS handshake right after connecting; data and the answer go over TLS. */
  tls?: boolean;
  /** Outpost extension: the name sent in SNI and checked against the certificate; null: hostname. */
  tlsServerName?: string | null;
  /** Outpost extension: an untrusted chain or a certificate for another host does not fail the run. */
  skipSSL?: boolean;
}

export interface TcpCheckDefinition extends CheckBase {
  checkType: 'TCP';
  request: TcpRequest;
  degradedResponseTime: number;
  maxResponseTime: number;
}

// ---------------------------------------------------------------------------------------------
// DNS (reference: ChecksV1DnsMonitorCreate, ChecksV1DnsRequest, ChecksV1DnsAssertion)

/** The reference's eight record types plus PTR, SRV and CAA. */
export const DNS_RECORD_TYPES = ['A', 'AAAA', 'CNAME', 'MX', 'TXT', 'SOA', 'NS', 'HTTPS', 'PTR', 'SRV', 'CAA'] as const;
export type DnsRecordType = (typeof DNS_RECORD_TYPES)[number];
export const DNS_PROTOCOLS = ['UDP', 'TCP'] as const;
export type DnsProtocol = (typeof DNS_PROTOCOLS)[number];
export const DNS_ASSERTION_SOURCES = ['RESPONSE_TIME', 'RESPONSE_CODE', 'TEXT_ANSWER', 'JSON_ANSWER'] as const;
export type DnsAssertionSource = (typeof DNS_ASSERTION_SOURCES)[number];
/** DNS assertions take all fourteen comparisons. */
export type DnsAssertion = AssertionOf<DnsAssertionSource, AssertionComparison>;

export interface DnsRequest {
  query: string;
  recordType: DnsRecordType;
  /** Address or host name of the server to ask; null asks the system's configured resolver. */
  nameServer: string | null;
  /** Server port; null means 53. */
  port: number | null;
  protocol: DnsProtocol;
  assertions: DnsAssertion[];
  /** Outpost extension: the RD bit of the query; absent means true. */
  recursionDesired?: boolean;
  /** Outpost extension: send an EDNS(0) OPT record (4096-byte UDP payload); absent means false. */
  edns?: boolean;
  /** Outpost extension: set the DNSSEC OK (DO) bit; implies EDNS; absent means false. */
  dnssecOk?: boolean;
}

export interface DnsCheckDefinition extends CheckBase {
  checkType: 'DNS';
  request: DnsRequest;
  degradedResponseTime: number;
  maxResponseTime: number;
}

// ---------------------------------------------------------------------------------------------
// ICMP (reference: ChecksV1IcmpMonitorCreate, ChecksV1IcmpRequest, ChecksV1IcmpAssertion)

export const ICMP_ASSERTION_SOURCES = ['LATENCY', 'JSON_RESPONSE'] as const;
export type IcmpAssertionSource = (typeof ICMP_ASSERTION_SOURCES)[number];
export const ICMP_ASSERTION_COMPARISONS = [
  'EQUALS',
  'NOT_EQUALS',
  'IS_EMPTY',
  'NOT_EMPTY',
  'GREATER_THAN',
  'LESS_THAN',
  'CONTAINS',
  'NOT_CONTAINS',
  'IS_NULL',
  'NOT_NULL',
] as const;
export type IcmpAssertionComparison = (typeof ICMP_ASSERTION_COMPARISONS)[number];
/** LATENCY assertions name the statistic in `property`: avg, min, max or stdDev (milliseconds). */
export const ICMP_LATENCY_PROPERTIES = ['avg', 'min', 'max', 'stdDev'] as const;
export type IcmpLatencyProperty = (typeof ICMP_LATENCY_PROPERTIES)[number];
export type IcmpAssertion = AssertionOf<IcmpAssertionSource, IcmpAssertionComparison>;

export const ICMP_PING_COUNT = { min: 1, max: 50, default: 10 } as const;

export interface IcmpRequest {
  hostname: string;
  ipFamily: IpFamily;
  /** Echo requests per run, 1 to 50. */
  pingCount: number;
  assertions: IcmpAssertion[];
}

export interface IcmpCheckDefinition extends CheckBase {
  checkType: 'ICMP';
  request: IcmpRequest;
  degradedResponseTime: number;
  maxResponseTime: number;
  /** Packet loss in percent (0 < x <= 100) at or above which the run is degraded. */
  degradedPacketLossThreshold: number;
  /** Packet loss in percent (0 < x <= 100) at or above which the run fails. */
  maxPacketLossThreshold: number;
}

// ---------------------------------------------------------------------------------------------
// Browser and multistep checks (reference: ChecksV1BrowserCheckCreate, ChecksV1MultiStepCheckCreate)

/** A file beside the script (the reference's ChecksV1Dependency): `path` is relative to the script. */
export interface ScriptDependency {
  path: string;
  content: string;
}

/**
 * A browser check: a Playwright script, either a `@playwright/test` spec (`test(...)` calls) or a
 * plain script that gets `page`, `context` and `browser` in scope (docs/checks.md).
 */
export interface BrowserCheckDefinition extends CheckBase {
  checkType: 'BROWSER';
  script: string;
  dependencies: ScriptDependency[];
}

/** A multistep check: a `@playwright/test` spec whose steps use `request` (and optionally `page`). */
export interface MultiStepCheckDefinition extends CheckBase {
  checkType: 'MULTI_STEP';
  script: string;
  dependencies: ScriptDependency[];
}

// ---------------------------------------------------------------------------------------------
// Playwright check suites (reference: ChecksV1PlaywrightCheck, CheckResultPlaywright; docs/suites.md)

/** What runs a suite's tests: Node.js 22, 24 or 26, or Bun 1.3 (runtimes/suite-engines on the agent). */
export const SUITE_ENGINES = ['node22', 'node24', 'node26', 'bun1.3'] as const;
export type SuiteEngine = (typeof SUITE_ENGINES)[number];
export const DEFAULT_SUITE_ENGINE: SuiteEngine = 'node24';
/** The reference's limit for a suite run: 60 minutes. */
export const DEFAULT_SUITE_GLOBAL_TIMEOUT_MS = 3_600_000;

export interface PlaywrightCheckDefinition extends CheckBase {
  checkType: 'PLAYWRIGHT';
  /** The project archive; the agent downloads it from the service by its SHA-256 (docs/suites.md). */
  codeBundle: { sha256: string; size: number; format: 'tar.gz' | 'zip' };
  engine: SuiteEngine;
  /** The folder inside the archive with package.json and playwright.config; null is the root. */
  workingDir: string | null;
  /** Arguments after `playwright test` in the check's testCommand (plain words, no shell). */
  testArgs: string[];
  /** The package manager's arguments from the check's installCommand; null installs from the lockfile. */
  installArgs: string[] | null;
  /** Install and tests together must finish within this; the result says when it was reached. */
  globalTimeoutMs: number;
  /** A passing run slower than this (ms) is degraded; null: only flaky tests make it degraded. */
  degradedResponseTime: number | null;
  /** Started as a test session (POST /v1/checks/playwright/{id}/trigger): the suite sees CI=true. */
  testSession: boolean;
}

/** One test of a suite run, from Playwright's JSON report. */
export interface PlaywrightTestResult {
  title: string;
  /** Describe blocks and title, file first. */
  titlePath: string[];
  file: string;
  line: number | null;
  projectName: string;
  /** The last attempt's status: passed, failed, timedOut, skipped or interrupted. */
  status: string;
  /** Playwright's verdict over all attempts: expected, unexpected, flaky or skipped. */
  outcome: string;
  /** Milliseconds over all attempts. */
  duration: number;
  /** Attempts after the first. */
  retries: number;
  /** The first error of the last failing attempt (message, cut), null when none. */
  error: string | null;
}

export type SuiteRunStatus = 'passed' | 'failed' | 'setup-error' | 'timed-out' | 'cancelled';

/**
 * `playwrightCheckResult` of a check result: the reference's CheckResultPlaywright fields (errors,
 * jobLog, jobAssets, traces, videos, report file) and what the agent adds (status, tests, summary).
 * It travels in RunResult.details.playwrightCheckResult; GET /v1/check-results shows it top-level.
 */
export interface PlaywrightCheckResult {
  status: SuiteRunStatus;
  /** Passed, but slower than degradedResponseTime or with flaky tests; `degradedReasons` says which. */
  degraded: boolean;
  degradedReasons: string[];
  engine: SuiteEngine;
  engineVersion: string | null;
  packageManager: string | null;
  playwrightVersion: string | null;
  testSession: boolean;
  globalTimeoutMs: number;
  globalTimeoutReached: boolean;
  dependencyCache: 'hit' | 'miss' | 'off';
  timings: { unpackMs: number; installMs: number; testMs: number };
  summary: {
    total: number;
    passed: number;
    failed: number;
    flaky: number;
    skipped: number;
    interrupted: number;
    timedOut: number;
  };
  tests: PlaywrightTestResult[];
  /** Setup errors and failed tests, one object each: {phase, message} or {test, message}. */
  errors: Array<Record<string, unknown>>;
  /** The user-visible log: install and test output, and the agent's notes. */
  jobLog: Array<{ time: string; phase: string; stream: string; msg: string }>;
  /** Names of the run's artifacts (details.artifacts has their kind, size and digest). */
  jobAssets: string[];
  playwrightTraceFiles: Array<{ name: string; filename: string }>;
  playwrightTestVideos: string[];
  playwrightTestTraces: string[];
  /** Artifact name of the JSON report, null when Playwright wrote none. */
  playwrightTestJsonReportFile: string | null;
  /** Artifact name of the zipped HTML report, null when none. */
  playwrightHtmlReportFile: string | null;
}

/** URL and SSL monitors are declared in ./monitors.ts. */
import type { SslCheckDefinition, UrlCheckDefinition } from './monitors.ts';

/** A check definition whose type has no runner in this version; the agent reports it plainly. */
export interface OtherCheckDefinition extends CheckBase {
  checkType: Exclude<
    CheckType,
    'API' | 'TCP' | 'DNS' | 'ICMP' | 'BROWSER' | 'MULTI_STEP' | 'PLAYWRIGHT' | 'URL' | 'SSL'
  >;
  [key: string]: unknown;
}

export type CheckDefinition =
  | ApiCheckDefinition
  | TcpCheckDefinition
  | DnsCheckDefinition
  | IcmpCheckDefinition
  | BrowserCheckDefinition
  | MultiStepCheckDefinition
  | PlaywrightCheckDefinition
  | UrlCheckDefinition
  | SslCheckDefinition
  | OtherCheckDefinition;

/** One evaluated assertion in a result: the definition plus what was seen and whether it held. */
export type EvaluatedAssertion<A> = A & {
  actual: unknown;
  passed: boolean;
  /** Set when the assertion could not be evaluated at all (bad JSONPath, bad regex). */
  error?: string;
};
export type AssertionResult = EvaluatedAssertion<Assertion>;

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
  request: {
    method: string;
    url: string;
    data: string;
    headers: Record<string, string>;
    params: Record<string, string>;
  };
  response: {
    status: number;
    statusText: string;
    body: string;
    /** True when the body was cut at the documented cap. */
    bodyTruncated?: boolean;
    /** Why the body could not be decoded as its Content-Encoding says (`body` is then empty). */
    bodyError?: string;
    /** The HTTP version spoken: '2' when the server chose h2 in ALPN, else '1.1'. */
    httpVersion?: '2' | '1.1';
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

/*
 * The reference's CheckResult has no field for TCP, DNS or ICMP results, so they travel in the
 * result's `details` under these names: details.tcpCheckResult, details.dnsCheckResult,
 * details.icmpCheckResult (see RunDetails in protocol.ts). Each follows CheckResultAPI's layout:
 * request, response (null when none came), assertions, requestError.
 */

/** `tcpCheckResult.tls`: what the handshake of a TCP check with `request.tls` showed. */
export interface TcpTlsDetails {
  /** Negotiated version as Node names it: TLSv1.2, TLSv1.3. */
  protocol: string | null;
  /** IANA name of the negotiated cipher suite. */
  cipher: string | null;
  /** The name checked against the certificate, and sent in SNI unless it is an IP address. */
  serverName: string;
  handshakeTimeMs: number;
  chainTrusted: boolean;
  /** OpenSSL's code when the chain is not trusted (SELF_SIGNED_CERT_IN_CHAIN, ...). */
  chainTrustReason: string | null;
  hostnameVerified: boolean;
  hostnameDetail: string | null;
  /** The server's (leaf) certificate; null when it sent none. */
  certificate: SslCertificateInfo | null;
}

/** `details.tcpCheckResult`. Times are milliseconds. */
export interface TcpCheckResult {
  request: {
    hostname: string;
    port: number;
    ipFamily: IpFamily;
    data: string | null;
    tls?: boolean;
    tlsServerName?: string | null;
    skipSSL?: boolean;
  };
  response: {
    /** What the server sent (UTF-8, invalid bytes replaced), cut at the documented cap. */
    data: string;
    dataTruncated: boolean;
    bytesReceived: number;
    remoteAddress: string;
    remotePort: number;
    family: IpFamily;
    /** `tls` is there for a TLS check only. */
    timingPhases: { dns: number; connect: number; tls?: number; data: number; total: number };
  } | null;
  /** Present for a TLS check once the handshake completed, also when verification then failed it. */
  tls?: TcpTlsDetails | null;
  assertions: EvaluatedAssertion<TcpAssertion>[];
  requestError: string | null;
}

/** One resource record of a DNS answer; `data` is its presentation form (as `dig` prints it). */
export interface DnsAnswerRecord {
  name: string;
  type: string;
  ttl: number;
  data: string;
}

/** `details.dnsCheckResult`. Times are milliseconds. */
export interface DnsCheckResult {
  request: {
    query: string;
    recordType: DnsRecordType;
    nameServer: string | null;
    port: number;
    protocol: DnsProtocol;
    recursionDesired?: boolean;
    edns?: boolean;
    dnssecOk?: boolean;
  };
  response: {
    /** Response code name: NOERROR, NXDOMAIN, SERVFAIL, REFUSED, ... */
    rcode: string;
    answers: DnsAnswerRecord[];
    authorities: DnsAnswerRecord[];
    additionals: DnsAnswerRecord[];
    /** The answer section as text, one record a line (`name ttl IN type data`), what TEXT_ANSWER sees. */
    textAnswer: string;
    flags: {
      authoritative: boolean;
      truncated: boolean;
      recursionDesired: boolean;
      recursionAvailable: boolean;
      /** AD: the server validated the answer with DNSSEC. */
      authenticData?: boolean;
      /** CD: checking disabled, as echoed by the server. */
      checkingDisabled?: boolean;
    };
    /** The answer's EDNS OPT record; null when the server sent none. */
    edns?: { udpPayloadSize: number; version: number; dnssecOk: boolean } | null;
    /** The server that answered and how. */
    server: { address: string; port: number };
    protocol: DnsProtocol;
    /** A UDP answer came back truncated and the query was asked again over TCP. */
    fellBackToTcp: boolean;
    timingPhases: { dns: number; query: number; total: number };
  } | null;
  assertions: EvaluatedAssertion<DnsAssertion>[];
  requestError: string | null;
}

/** `details.icmpCheckResult`. Times are milliseconds, loss is percent. */
export interface IcmpCheckResult {
  request: { hostname: string; ipFamily: IpFamily; pingCount: number };
  response: {
    resolvedIp: string;
    family: IpFamily;
    packetsSent: number;
    packetsReceived: number;
    packetLoss: number;
    /** Null when no reply came back. */
    latency: { min: number; max: number; avg: number; stdDev: number } | null;
    /** One entry per echo request; rtt is null for a lost one. */
    pings: Array<{ sequence: number; rtt: number | null; ttl?: number | null }>;
  } | null;
  assertions: EvaluatedAssertion<IcmpAssertion>[];
  requestError: string | null;
}

// ---------------------------------------------------------------------------------------------
// Browser and multistep results (reference: CheckResultBrowser, MultiStepResultBrowser)

/** One page the script visited, as the agent observed it (the reference's free-form `pages` items). */
export interface BrowserPageVisit {
  url: string;
  title: string | null;
  /** console.error messages and uncaught page errors. */
  consoleErrors: Array<{ type: 'console' | 'pageerror'; text: string; location?: string }>;
  /** Requests that failed on the network, and responses with status 400 or above. */
  failedRequests: Array<{
    url: string;
    method: string;
    status: number | null;
    failure: string | null;
    resourceType: string;
  }>;
}

/** A failure of the script, with where in the user's script it happened (line and column, 1-based). */
export interface BrowserScriptError {
  name: string;
  message: string;
  stack: string | null;
  /** The file the error points at: `script.js` for the check's script, else the dependency's path. */
  file: string | null;
  line: number | null;
  column: number | null;
  /** The failing line with its neighbours, as Playwright shows it. */
  snippet?: string | null;
  /** The test that failed, for `@playwright/test` scripts. */
  test?: string;
}

/** One line of the check's log. */
export interface BrowserLogLine {
  time: number;
  level: 'INFO' | 'ERROR';
  msg: string;
}

/** `browserCheckResult` (CheckResultBrowser) and, without pages and videos, `multiStepCheckResult`. */
export interface BrowserCheckResult {
  type: 'PLAYWRIGHT_TEST' | 'PLAYWRIGHT_SCRIPT';
  /** Counts of what went wrong in the pages (the reference's traceSummary). */
  traceSummary: { consoleErrors: number; networkErrors: number; documentErrors: number; userScriptErrors: number };
  pages: BrowserPageVisit[];
  errors: BrowserScriptError[];
  /** Epoch milliseconds. */
  startTime: number;
  endTime: number;
  runtimeVersion: string;
  jobLog: BrowserLogLine[];
  /** Names of the run's artifacts (details.artifacts has their kind, size and digest). */
  jobAssets: string[];
  screenshots: string[];
  playwrightTestVideos: string[];
  playwrightTestTraces: string[];
  playwrightTestJsonReportFile?: string;
}

export type MultiStepCheckResult = Omit<
  BrowserCheckResult,
  'type' | 'pages' | 'traceSummary' | 'playwrightTestVideos'
> & {
  pages?: BrowserPageVisit[];
};
