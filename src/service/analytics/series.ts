/**
 * Turns hourly rollups into the reference's analytics `series`: rows merged per group (run location
 * or status code) and per aggregation interval, then each requested metric computed from the merged
 * figures. The response time lives in the rollup's columns, every other measured metric in its
 * `metrics` JSON (../store/metric-summary.ts); both become one MetricSummary per metric name here.
 */
import type { RunResult } from '../../shared/protocol.ts';
import { BadRequestError } from '../http/errors.ts';
import type { RawResultRecord, RollupRecord } from '../store/analytics-types.ts';
import {
  aggregate,
  emptySummary,
  type MetricSummaries,
  mergeSummaries,
  mergeSummary,
} from '../store/metric-summary.ts';
import type { Histogram } from '../store/response-histogram.ts';
import {
  AGGREGATIONS,
  type Aggregation,
  type AnalyticsKind,
  type GroupBy,
  type MetricDef,
  measuredMetrics,
  statusCodeOf,
} from './catalog.ts';
import { HOUR_MS } from './window.ts';

export interface RequestedMetric {
  /** As asked: `responseTime_p95`, `availability`, `dns`. */
  name: string;
  /** `availability`, `retries` or one of the kind's metrics. */
  base: string;
  def: MetricDef | undefined;
  aggregation: Aggregation | null;
}

/** Figures of a set of rollup rows merged together. */
interface Merged {
  runs: number;
  failures: number;
  retries: number;
  summaries: MetricSummaries;
}

export type SeriesRow = Record<string, string | number | null>;
export interface SeriesEntry {
  runLocation?: string;
  statusCode?: number;
  data: SeriesRow[];
}

/** The `metrics` parameter: a list, each element possibly comma-separated, every name checked against the kind. */
export function parseMetrics(kind: AnalyticsKind, values: readonly string[]): RequestedMetric[] {
  const names = values
    .flatMap((v) => v.split(','))
    .map((v) => v.trim())
    .filter((v) => v !== '');
  if (names.length === 0) throw new BadRequestError('querystring/metrics must name at least one metric');
  const metrics = names.map((name) => parseOne(kind, name));
  const raw = metrics.some((m) => m.def && m.aggregation === null);
  const aggregated = metrics.some((m) => m.aggregation !== null);
  if (raw && aggregated)
    throw new BadRequestError(
      'querystring/metrics cannot mix non-aggregated metrics (e.g. responseTime) with aggregated ones (e.g. responseTime_avg)',
    );
  return metrics;
}

function parseOne(kind: AnalyticsKind, name: string): RequestedMetric {
  if (name === 'availability' || name === 'retries') return { name, base: name, def: undefined, aggregation: null };
  const cut = name.lastIndexOf('_');
  const base = cut < 0 ? name : name.slice(0, cut);
  const suffix = cut < 0 ? null : name.slice(cut + 1);
  const def = kind.metrics.find((m) => m.name === base);
  const aggregation = suffix === null ? null : (AGGREGATIONS.find((a) => a === suffix) ?? undefined);
  if (!def || aggregation === undefined) {
    throw new BadRequestError(
      `querystring/metrics: ${JSON.stringify(name)} is not a metric of ${kind.path} (GET /v1/analytics/metrics?checkType=${kind.checkType} lists them)`,
    );
  }
  return { name, base, def, aggregation };
}

/** Whether the query asks for raw data points (a metric without aggregation other than availability and retries). */
export const isRawQuery = (metrics: readonly RequestedMetric[]): boolean =>
  metrics.some((m) => m.def !== undefined && m.aggregation === null);

const emptyMerged = (): Merged => ({ runs: 0, failures: 0, retries: 0, summaries: {} });

function mergeRow(target: Merged, row: RollupRecord, kind: AnalyticsKind, withMeasured: boolean): void {
  target.runs += row.runs;
  target.failures += row.failures;
  target.retries += row.retries;
  const timed = kind.metrics.find((m) => m.source === 'responseTime');
  if (timed && row.runs > 0) {
    const summary = target.summaries[timed.name] ?? emptySummary();
    target.summaries[timed.name] = summary;
    const h = JSON.parse(row.histogram) as Histogram;
    mergeSummary(summary, { n: row.runs, s: row.totalMs, q: row.sqMs, mn: row.minMs, mx: row.maxMs, h });
  }
  if (withMeasured) mergeSummaries(target.summaries, JSON.parse(row.metrics) as MetricSummaries);
}

function metricValue(merged: Merged, metric: RequestedMetric): number | null {
  if (metric.base === 'availability')
    return merged.runs === 0 ? null : round(((merged.runs - merged.failures) / merged.runs) * 100);
  if (metric.base === 'retries') return merged.runs === 0 ? null : merged.retries;
  return round(aggregate(merged.summaries[metric.base], metric.aggregation ?? 'avg'));
}

const round = (value: number | null): number | null => (value === null ? null : Math.round(value * 1000) / 1000);

export interface SeriesOptions {
  kind: AnalyticsKind;
  metrics: readonly RequestedMetric[];
  groupBy: GroupBy | undefined;
  /** Hours per data row; undefined: one row for the whole window. */
  intervalHours: number | undefined;
  fromHour: number;
  toHour: number;
}

const groupKeyOf = (
  row: { location: string; statusCode: number },
  groupBy: GroupBy | undefined,
): string | number | undefined =>
  groupBy === 'runLocation' ? row.location : groupBy === 'statusCode' ? row.statusCode : undefined;

/** Aggregated series: one entry per group (one without groupBy), one data row per interval. */
export function aggregatedSeries(rows: readonly RollupRecord[], o: SeriesOptions): SeriesEntry[] {
  const withMeasured = o.metrics.some((m) => m.def?.source === 'measured');
  const groups = new Map<string | number | undefined, Map<number, Merged>>();
  if (o.groupBy === undefined) groups.set(undefined, new Map());
  for (const row of rows) {
    const key = groupKeyOf(row, o.groupBy);
    const buckets = groups.get(key) ?? new Map<number, Merged>();
    groups.set(key, buckets);
    const bucket = o.intervalHours === undefined ? 0 : Math.floor((row.hour - o.fromHour) / o.intervalHours);
    const merged = buckets.get(bucket) ?? emptyMerged();
    buckets.set(bucket, merged);
    mergeRow(merged, row, o.kind, withMeasured);
  }
  const keys = [...groups.keys()].sort((a, b) => String(a).localeCompare(String(b), 'en', { numeric: true }));
  return keys.map((key) => entryOf(key, groups.get(key) ?? new Map(), o));
}

function entryOf(key: string | number | undefined, buckets: Map<number, Merged>, o: SeriesOptions): SeriesEntry {
  const label = key === undefined || o.groupBy === undefined || o.groupBy === 'pageIndex' ? {} : { [o.groupBy]: key };
  const count = o.intervalHours === undefined ? 1 : Math.ceil((o.toHour - o.fromHour) / o.intervalHours);
  const data: SeriesRow[] = [];
  for (let i = 0; i < count; i++) {
    const merged = buckets.get(i) ?? emptyMerged();
    const row: SeriesRow = { ...label };
    if (o.intervalHours !== undefined)
      row.timestamp = new Date((o.fromHour + i * o.intervalHours) * HOUR_MS).toISOString();
    for (const metric of o.metrics) row[metric.name] = metricValue(merged, metric);
    data.push(row);
  }
  return { ...label, data };
}

/** Raw data points: one row per stored result, with each requested metric as that run measured it. */
export function rawSeries(
  results: readonly RawResultRecord[],
  o: Pick<SeriesOptions, 'kind' | 'metrics' | 'groupBy'>,
): SeriesEntry[] {
  const groups = new Map<string | number | undefined, SeriesRow[]>();
  if (o.groupBy === undefined) groups.set(undefined, []);
  for (const record of results) {
    const payload = JSON.parse(record.payload) as RunResult;
    const statusCode = statusCodeOf(payload);
    const key = groupKeyOf({ location: record.location, statusCode }, o.groupBy);
    const measured = measuredMetrics(payload);
    const row: SeriesRow = {
      timestamp: record.createdAt,
      runLocation: record.location,
      ...(o.kind.groupBy.includes('statusCode') ? { statusCode } : {}),
    };
    for (const m of o.metrics) row[m.name] = rawValue(m, payload, record, measured);
    groups.set(key, [...(groups.get(key) ?? []), row]);
  }
  return [...groups.entries()].map(([key, data]) =>
    key === undefined || o.groupBy === undefined ? { data } : { [o.groupBy]: key, data },
  );
}

function rawValue(
  m: RequestedMetric,
  payload: RunResult,
  record: RawResultRecord,
  measured: Record<string, number>,
): number | null {
  if (m.base === 'availability') return payload.hasFailures || payload.hasErrors ? 0 : 100;
  if (m.base === 'retries') return Math.max(0, record.attempts - 1);
  if (m.def?.source === 'responseTime') return payload.responseTime;
  return measured[m.base] ?? null;
}
