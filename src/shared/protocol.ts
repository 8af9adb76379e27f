/**
 * The agent job protocol: what the agent and the service say to each other.
 * Both sides import these types; docs/protocol.md explains the flow and the reasons.
 *
 * Every call is an HTTP POST with a JSON body to `${API_URL}${AGENT_API_PREFIX}/...`, authenticated
 * with `Authorization: Bearer <private location key>` (pl_...).
 */
import type { ArtifactNote, ArtifactRef } from './artifacts.ts';
import type {
  ResolvedVia,
  PcapResult,
  ShouldFailEffect,
  SkippedAddress,
  TracerouteDetails,
  VariableNote,
} from './checks/details.ts';
import type { SslCheckResult } from './checks/monitors.ts';
import type {
  ApiCheckResult,
  ApiTlsDetails,
  BrowserCheckResult,
  CheckClass,
  CheckDefinition,
  CheckType,
  DnsCheckResult,
  IcmpCheckResult,
  IpFamily,
  MultiStepCheckResult,
  PlaywrightCheckResult,
  TcpCheckResult,
  TcpTimingPhases,
  TimingPhases,
} from './checks/types.ts';

export const AGENT_API_PREFIX = '/agent/v1';
export const PROTOCOL_VERSION = 1;
/**
 * How far ahead of its due time the service enqueues a run and so may hand it out; the job says how
 * long to wait (Job.startInMs). Batching a moment's runs into one enqueue and one lease per agent
 * is what keeps the store's commits and the lease round trips from growing with the run rate.
 */
export const SCHEDULE_AHEAD_MS = 100;

export const AGENT_PATHS = {
  register: `${AGENT_API_PREFIX}/register`,
  lease: `${AGENT_API_PREFIX}/lease`,
  heartbeat: `${AGENT_API_PREFIX}/heartbeat`,
  results: `${AGENT_API_PREFIX}/results`,
  resultBatches: `${AGENT_API_PREFIX}/result-batches`,
  release: `${AGENT_API_PREFIX}/release`,
  deregister: `${AGENT_API_PREFIX}/deregister`,
} as const;

export interface AgentCapabilities {
  /** Check types this agent has a runner for; the service leases it nothing else. */
  checkTypes: CheckType[];
  /** Runtime ids (e.g. "2026.04") the agent carries for user code. */
  runtimes: string[];
}

export interface RegisterRequest {
  /** Chosen by the agent at start (random UUID); stable for the life of the process. */
  agentId: string;
  version: string;
  protocolVersion: number;
  hostname: string;
  capabilities: AgentCapabilities;
  concurrency: Record<CheckClass, number>;
}

export interface RegisterResponse {
  agentId: string;
  location: { id: string; slugName: string; name: string };
  /** How long a lease lasts without a heartbeat. */
  leaseSeconds: number;
  /** How often the agent should heartbeat its running leases (also how fast it learns of cancels). */
  heartbeatSeconds: number;
  /** The longest a lease request is held open by the service. */
  maxWaitSeconds: number;
  /**
   * Sentry DSN for error reports, or null when the service does not take them. Its public key is a
   * per-location report token, never the location API key.
   */
  errorReportingDsn: string | null;
  /**
   * The most results one `result-batches` call may carry. Absent from services that take one result
   * per `results` call, so an agent sends one at a time to them.
   */
  resultBatchMax?: number;
}

export interface LeaseRequest {
  agentId: string;
  /** Free slots per class; the service never hands out more jobs of a class than this. */
  slots: Record<CheckClass, number>;
  /** How long the service may hold the request open waiting for work (capped at maxWaitSeconds). */
  waitSeconds: number;
}

export interface Job {
  /** One run of one check at one location. The result is keyed by it, so retried uploads are harmless. */
  runId: string;
  /** Identifies this lease of the run; a run leased again after expiry gets a new leaseId. */
  leaseId: string;
  leaseExpiresAt: string;
  /** 1 for the first lease of the run, 2 when it was leased again after an agent died, ... */
  leaseAttempt: number;
  /** When the run was due (ISO). The agent measures due-to-start latency from it. */
  dueAt: string;
  /**
   * How long after receiving the job the agent starts it: runs are handed out up to
   * SCHEDULE_AHEAD_MS before they are due (docs/protocol.md "Leasing ahead"). Absent or 0: at once.
   * A relative figure, so the agent's clock need not agree with the service's.
   */
  startInMs?: number;
  checkClass: CheckClass;
  /** Wall-clock limit for the run on the agent. */
  timeoutMs: number;
  check: CheckDefinition;
}

export interface LeaseResponse {
  jobs: Job[];
}

export interface LeaseRef {
  runId: string;
  leaseId: string;
}

export interface HeartbeatRequest {
  agentId: string;
  leases: LeaseRef[];
}

/**
 * `active`: keep going, the lease was extended. `cancelled`: stop the run now and report it cancelled.
 * `lost`: the lease is no longer this agent's (expired and leased again, or the run was removed);
 * stop the run, its result would be a duplicate.
 */
export type LeaseState = 'active' | 'cancelled' | 'lost';

export interface HeartbeatResponse {
  leases: Array<LeaseRef & { state: LeaseState; leaseExpiresAt: string | null }>;
}

/** What the agent measured; the service adds ids, names and location when it stores it. */
export interface RunResult {
  runId: string;
  checkId: string;
  checkType: CheckType;
  startedAt: string;
  stoppedAt: string;
  /** Milliseconds the check itself took. */
  responseTime: number;
  hasFailures: boolean;
  /** The run hit an error of the agent or of the check's own code, not merely a failed assertion. */
  hasErrors: boolean;
  isDegraded: boolean;
  overMaxResponseTime: boolean;
  isCancelled: boolean;
  /** A short human-readable reason when the run failed, errored or was cancelled. */
  error: string | null;
  apiCheckResult: ApiCheckResult | null;
  /** Type-specific results that have no field of their own in the reference's CheckResult. */
  details?: RunDetails;
  agent: { id: string; version: string };
  /** Due-to-start delay the agent observed, for the e2e benchmark and for diagnosis. */
  scheduleLagMs: number;
}

/** What the details of a run of any type may carry beside its type's own. */
type CommonRunDetails = {
  /** What shouldFail changed, when it changed something. */
  shouldFail?: ShouldFailEffect;
  /** `{{...}}` references sent as written. */
  variableNotes?: VariableNote[];
  /** The run's artifacts, and those the agent left out. */
  artifacts?: ArtifactRef[];
  artifactNotes?: ArtifactNote[];
};

/**
 * Each check type's own keys in `details`. The reference's CheckResult has fields for API results
 * only, so the TCP, DNS, ICMP, SSL, browser, multistep and suite results travel here under their
 * type's name (GET /v1/check-results shows them top-level).
 */
type DetailsByType = {
  /**
   * API checks and URL monitors (their result is apiCheckResult), and runs with no result of their
   * own: where the request went and how far it got, and the diagnostics of a failure on the network.
   */
  API: {
    finalUrl?: string | null;
    redirects?: Array<{ url: string; status: number }>;
    remoteAddress?: string | null;
    ipFamily?: IpFamily | null;
    resolvedVia?: ResolvedVia | null;
    tls?: ApiTlsDetails | null;
    /** Without a response: how far the request got. */
    timingPhases?: TimingPhases;
    timings?: Record<string, number>;
    bodyBytes?: number;
    bodyComplete?: boolean;
    maxResponseBytes?: number | null;
    traceroute?: TracerouteDetails;
    pcap?: PcapResult;
    /** Why a run without a result of its own got no answer (a retry policy's NETWORK_ERROR). */
    requestError?: string | null;
  };
  TCP: {
    tcpCheckResult: TcpCheckResult;
    resolvedVia?: ResolvedVia | null;
    /** Without an answer: how far the connection got. */
    timingPhases?: TcpTimingPhases;
  };
  DNS: {
    dnsCheckResult: DnsCheckResult;
    /** Without an answer: how far the query got, and the server asked. */
    timingPhases?: NonNullable<DnsCheckResult['response']>['timingPhases'];
    server?: { address: string; port: number } | null;
  };
  ICMP: {
    icmpCheckResult: IcmpCheckResult;
    resolvedVia?: ResolvedVia | null;
    skippedAddresses?: SkippedAddress[];
    /** The agent could not ping at all: its failure, not the target's (shouldFail does not apply). */
    icmpUnavailable?: boolean;
    durationMs?: number;
  };
  /** SSL monitors (the reference's CheckResultSsl); URL monitors use apiCheckResult. */
  SSL: { sslCheckResult: SslCheckResult; resolvedVia?: ResolvedVia | null };
  /** The public API shows it as the result's `browserCheckResult`. */
  BROWSER: { browserCheckResult: BrowserCheckResult };
  /** Shown as `multiStepCheckResult`. */
  MULTI_STEP: { multiStepCheckResult: MultiStepCheckResult };
  /** Check suites: shown as `playwrightCheckResult`. */
  PLAYWRIGHT: { playwrightCheckResult: PlaywrightCheckResult };
};

type DetailsKey = { [T in keyof DetailsByType]: keyof DetailsByType[T] }[keyof DetailsByType];

/**
 * The details of one check type: its own keys, and every other type's key absent, so that any key
 * reads on RunDetails as what it is where it is set (or undefined), and a type's result narrows it.
 */
export type RunDetailsOf<T extends keyof DetailsByType> = CommonRunDetails &
  DetailsByType[T] & { [K in Exclude<DetailsKey, keyof DetailsByType[T]>]?: never };

export type ApiRunDetails = RunDetailsOf<'API'>;
export type TcpRunDetails = RunDetailsOf<'TCP'>;
export type DnsRunDetails = RunDetailsOf<'DNS'>;
export type IcmpRunDetails = RunDetailsOf<'ICMP'>;
export type SslRunDetails = RunDetailsOf<'SSL'>;

/** `RunResult.details`: the variant of the run's check type (API's for URL monitors and runs without a result). */
export type RunDetails = { [T in keyof DetailsByType]: RunDetailsOf<T> }[keyof DetailsByType];

export interface SubmitResultRequest {
  agentId: string;
  leaseId: string;
  result: RunResult;
}

export interface SubmitResultResponse {
  /** `stored` the first time, `duplicate` when the run already has a result (the upload was retried). */
  status: 'stored' | 'duplicate';
  resultId: string;
}

/** Results of several runs in one call, stored in one transaction; each as `results` would store it. */
export interface SubmitResultBatchRequest {
  agentId: string;
  /** 1 to `resultBatchMax` results, each with the lease it was measured under. */
  results: Array<{ leaseId: string; result: RunResult }>;
}

/**
 * One outcome per submitted result, in the order sent: `stored` or `duplicate` as `results` answers,
 * `unknown` where `results` would answer 404 (the run is unknown, of another location, or its check
 * was deleted): final, the agent drops that result.
 */
export type ResultOutcome = (SubmitResultResponse & { runId: string }) | { runId: string; status: 'unknown' };

export interface SubmitResultBatchResponse {
  outcomes: ResultOutcome[];
}

export interface ReleaseRequest {
  agentId: string;
  leases: Array<LeaseRef & { reason: string }>;
}

export interface DeregisterRequest {
  agentId: string;
}

/** Error body of every protocol call, the same shape as the public API's. */
export interface ProtocolError {
  statusCode: number;
  error: string;
  message: string;
}
