/**
 * The analytics endpoints, one entry per check type: its URL segment, the metrics the reference lists
 * for it (openapi-subset.json, Analytics*Metadata), its groupings and how a stored result's measurements
 * map onto those metrics. Everything else (routes, the rollup write, /v1/analytics/metrics) reads this
 * table, so serving a new type is one entry here.
 *
 * `responseTime` is kept in the rollup's own columns (with its histogram); every other measured metric
 * goes into the rollup's `metrics` JSON, filled by `measure`.
 */
import type { RunResult } from '../../shared/protocol.ts';
import type { StoredCheck } from '../store/store.ts';

export type MetricUnit = 'milliseconds' | 'score' | 'count' | 'percentage';
export type GroupBy = 'runLocation' | 'statusCode' | 'pageIndex';

export interface MetricDef {
  name: string;
  unit: MetricUnit;
  label: string;
  /** `responseTime`: the result's response time (rollup columns); `measured`: from `measure`. */
  source: 'responseTime' | 'measured';
}

export interface AnalyticsKind {
  /** GET /v1/analytics/<path>/{id}. */
  path: string;
  /** The stored check type (and /v1/analytics/metrics?checkType=). */
  checkType: StoredCheck['checkType'];
  /** The reference's base metrics other than availability and retries, in its order. */
  metrics: readonly MetricDef[];
  groupBy: readonly GroupBy[];
  /** heartbeat-checks takes no aggregationInterval in the reference. */
  intervals: boolean;
  /** The values of the `measured` metrics one result recorded (absent ones are simply not there). */
  measure?: (result: RunResult) => Record<string, number>;
}

export const AGGREGATIONS = ['avg', 'max', 'median', 'min', 'p50', 'p90', 'p95', 'p99', 'stddev', 'sum'] as const;
export type Aggregation = (typeof AGGREGATIONS)[number];

const ms = (name: string, label: string, source: MetricDef['source'] = 'measured'): MetricDef => ({
  name,
  unit: 'milliseconds',
  label,
  source,
});
const count = (name: string, label: string): MetricDef => ({ name, unit: 'count', label, source: 'measured' });

/** Only finite numbers are recorded: a phase the runner could not time is left out, not counted as 0. */
function pick(out: Record<string, number>, name: string, value: unknown): void {
  if (typeof value === 'number' && Number.isFinite(value)) out[name] = value;
}

function httpPhases(result: RunResult): Record<string, number> {
  const phases = result.apiCheckResult?.response?.timingPhases;
  const out: Record<string, number> = {};
  for (const name of ['wait', 'dns', 'tcp', 'firstByte', 'download'] as const) pick(out, name, phases?.[name]);
  return out;
}

function tcpPhases(result: RunResult): Record<string, number> {
  const phases = result.details?.tcpCheckResult?.response?.timingPhases;
  const out: Record<string, number> = {};
  pick(out, 'dns', phases?.dns);
  pick(out, 'connection', phases?.connect);
  pick(out, 'data', phases?.data);
  return out;
}

function icmpFigures(result: RunResult): Record<string, number> {
  const response = result.details?.icmpCheckResult?.response;
  const out: Record<string, number> = {};
  pick(out, 'packetLoss', response?.packetLoss);
  pick(out, 'latencyMin', response?.latency?.min);
  pick(out, 'latencyMax', response?.latency?.max);
  pick(out, 'latencyAvg', response?.latency?.avg);
  pick(out, 'latencyStdDev', response?.latency?.stdDev);
  return out;
}

function browserErrors(result: RunResult): Record<string, number> {
  const summary = result.details?.browserCheckResult?.traceSummary;
  const out: Record<string, number> = {};
  for (const name of ['consoleErrors', 'networkErrors', 'userScriptErrors', 'documentErrors'] as const)
    pick(out, name, summary?.[name]);
  return out;
}

/** Read loosely: SSL monitors are new, and their result's shape may still grow. Booleans count as 1 and 0. */
function sslFigures(result: RunResult): Record<string, number> {
  const ssl = (result.details?.sslCheckResult ?? {}) as Record<string, unknown>;
  const out: Record<string, number> = {};
  pick(out, 'handshakeTimeMs', ssl.handshakeTimeMs);
  pick(out, 'daysUntilExpiry', ssl.daysUntilExpiry);
  for (const flag of ['hostnameVerified', 'chainTrusted', 'ocspStapled'] as const)
    if (typeof ssl[flag] === 'boolean') out[flag] = ssl[flag] ? 1 : 0;
  return out;
}

const HTTP_METRICS: readonly MetricDef[] = [
  ms('responseTime', 'Response time', 'responseTime'),
  ms('wait', 'Wait'),
  ms('dns', 'DNS lookup'),
  ms('tcp', 'TCP connection'),
  ms('firstByte', 'Time to first byte'),
  ms('download', 'Download'),
];

/** Every type Outpost may serve. `served` below keeps those whose checks the service has. */
export const ANALYTICS_KINDS: readonly AnalyticsKind[] = [
  {
    path: 'api-checks',
    checkType: 'API',
    metrics: HTTP_METRICS,
    groupBy: ['runLocation', 'statusCode'],
    intervals: true,
    measure: httpPhases,
  },
  {
    path: 'browser-checks',
    checkType: 'BROWSER',
    // TTFB, FCP, LCP, CLS and TBT are in the reference but Outpost's browser results do not record
    // web vitals yet: accepted, always null. pageIndex grouping needs per-page figures: refused (400).
    metrics: [
      ms('responseTime', 'Response time for the full script', 'responseTime'),
      ms('TTFB', 'Time To First Byte'),
      ms('FCP', 'First Contentful Paint'),
      ms('LCP', 'Largest Contentful Paint'),
      { name: 'CLS', unit: 'score', label: 'Cumulative Layout Shift', source: 'measured' },
      ms('TBT', 'Total Blocking Time'),
      count('consoleErrors', 'Console errors'),
      count('networkErrors', 'Network errors'),
      count('userScriptErrors', 'User script errors'),
      count('documentErrors', 'Document errors'),
    ],
    groupBy: ['runLocation', 'pageIndex'],
    intervals: true,
    measure: browserErrors,
  },
  {
    path: 'multistep-checks',
    checkType: 'MULTI_STEP',
    metrics: [ms('responseTime', 'Response time', 'responseTime')],
    groupBy: ['runLocation'],
    intervals: true,
  },
  {
    path: 'playwright-checks',
    checkType: 'PLAYWRIGHT',
    metrics: [ms('responseTime', 'Response time', 'responseTime')],
    groupBy: ['runLocation'],
    intervals: true,
  },
  { path: 'heartbeat-checks', checkType: 'HEARTBEAT', metrics: [], groupBy: [], intervals: false },
  {
    path: 'tcp-checks',
    checkType: 'TCP',
    metrics: [
      ms('total', 'Total time', 'responseTime'),
      ms('dns', 'DNS lookup'),
      ms('connection', 'Connection'),
      ms('data', 'Data exchange'),
    ],
    groupBy: ['runLocation'],
    intervals: true,
    measure: tcpPhases,
  },
  {
    path: 'dns',
    checkType: 'DNS',
    metrics: [ms('total', 'Total time', 'responseTime')],
    groupBy: ['runLocation'],
    intervals: true,
  },
  {
    path: 'icmp',
    checkType: 'ICMP',
    metrics: [
      { name: 'packetLoss', unit: 'percentage', label: 'Packet loss', source: 'measured' },
      ms('latencyMin', 'Minimum latency'),
      ms('latencyMax', 'Maximum latency'),
      ms('latencyAvg', 'Average latency'),
      ms('latencyStdDev', 'Latency standard deviation'),
    ],
    groupBy: ['runLocation'],
    intervals: true,
    measure: icmpFigures,
  },
  // URL monitors' results carry apiCheckResult timings, like API checks'.
  {
    path: 'url-monitors',
    checkType: 'URL',
    metrics: HTTP_METRICS,
    groupBy: ['runLocation', 'statusCode'],
    intervals: true,
    measure: httpPhases,
  },
  {
    path: 'ssl',
    checkType: 'SSL',
    // tlsVersion, cipherSuite, keySizeBits and the baseline's verdict and grade are accepted but not
    // numbers a rollup can aggregate (or not recorded): always null.
    metrics: [
      ms('handshakeTimeMs', 'TLS handshake time'),
      { name: 'daysUntilExpiry', unit: 'count', label: 'Days until the certificate expires', source: 'measured' },
      count('tlsVersion', 'TLS version'),
      count('cipherSuite', 'Cipher suite'),
      { name: 'hostnameVerified', unit: 'score', label: 'Host name verified (1) or not (0)', source: 'measured' },
      { name: 'chainTrusted', unit: 'score', label: 'Chain trusted (1) or not (0)', source: 'measured' },
      { name: 'ocspStapled', unit: 'score', label: 'OCSP response stapled (1) or not (0)', source: 'measured' },
      count('keySizeBits', 'Key size in bits'),
      count('baselineVerdict', 'Security baseline verdict'),
      count('baselineGrade', 'Security baseline grade'),
    ],
    groupBy: ['runLocation'],
    intervals: true,
    measure: sslFigures,
  },
];

/** The kinds whose check type the service stores; `checkTypes` is the service's list (CHECK_TYPES and HEARTBEAT). */
export function servedKinds(checkTypes: readonly string[]): AnalyticsKind[] {
  return ANALYTICS_KINDS.filter((k) => checkTypes.includes(k.checkType));
}

export function kindOfCheckType(checkType: string): AnalyticsKind | undefined {
  return ANALYTICS_KINDS.find((k) => k.checkType === checkType);
}

/** What a result adds to the rollup besides its response time: its measured metrics, by name. */
export function measuredMetrics(result: RunResult): Record<string, number> {
  return kindOfCheckType(result.checkType)?.measure?.(result) ?? {};
}

/** The HTTP status an API-like result got (the statusCode grouping), 0 for every other result. */
export function statusCodeOf(result: RunResult): number {
  const status = result.apiCheckResult?.response?.status;
  return typeof status === 'number' && Number.isInteger(status) ? status : 0;
}
