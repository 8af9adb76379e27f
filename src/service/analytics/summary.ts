/**
 * The smaller analytics answers: the `metadata` of a query, GET /v1/analytics/metrics's descriptors
 * and the per-check summary of POST /v1/analytics/checks (AnalyticsBatchResponseItem: fields only
 * where the metric applies to the check's type, null where it applies but nothing ran).
 */
import type { RollupRecord } from '../store/analytics-types.ts';
import type { StoredCheck } from '../store/store.ts';
import { AGGREGATIONS, type AnalyticsKind } from './catalog.ts';
import { aggregatedSeries, type RequestedMetric } from './series.ts';

const AVAILABILITY = { unit: 'percentage', label: 'Availability' } as const;
const RETRIES = { unit: 'count', label: 'Retries' } as const;

/** Each requested metric's unit, label and aggregation, keyed by its name as asked. */
export function metadataOf(
  metrics: readonly RequestedMetric[],
): Record<string, { unit: string; label: string; aggregation?: string }> {
  const out: Record<string, { unit: string; label: string; aggregation?: string }> = {};
  for (const m of metrics) {
    if (m.base === 'availability') out[m.name] = { ...AVAILABILITY };
    else if (m.base === 'retries') out[m.name] = { ...RETRIES, aggregation: 'sum' };
    else if (m.def)
      out[m.name] = { unit: m.def.unit, label: m.def.label, ...(m.aggregation ? { aggregation: m.aggregation } : {}) };
  }
  return out;
}

export interface MetricDescriptor {
  name: string;
  unit: string;
  label: string;
  type: string;
  aggregated: boolean;
}

/** Every metric name a kind takes: each base metric raw and with each aggregation, then availability and retries. */
export function metricDescriptors(kind: AnalyticsKind | undefined): MetricDescriptor[] {
  if (!kind) return [];
  const out: MetricDescriptor[] = [];
  for (const def of kind.metrics) {
    out.push({ name: def.name, unit: def.unit, label: def.label, type: 'Float', aggregated: false });
    for (const a of AGGREGATIONS)
      out.push({ name: `${def.name}_${a}`, unit: def.unit, label: def.label, type: 'Float', aggregated: true });
  }
  out.push({ name: 'availability', ...AVAILABILITY, type: 'Float', aggregated: true });
  out.push({ name: 'retries', ...RETRIES, type: 'Integer', aggregated: true });
  return out;
}

/** The batch summary's field → the metric of the kind it is read from, and the aggregation. */
function batchFields(kind: AnalyticsKind): Array<[string, string, RequestedMetric['aggregation']]> {
  if (kind.checkType === 'HEARTBEAT') return [];
  if (kind.checkType === 'ICMP') {
    return [
      ['latency_avg', 'latencyAvg', 'avg'],
      ['latency_p50', 'latencyAvg', 'p50'],
      ['latency_p95', 'latencyAvg', 'p95'],
      ['latency_p99', 'latencyAvg', 'p99'],
      ['packetLoss_avg', 'packetLoss', 'avg'],
      ['packetLoss_p95', 'packetLoss', 'p95'],
      ['packetLoss_p99', 'packetLoss', 'p99'],
    ];
  }
  const timed = kind.metrics.find((m) => m.source === 'responseTime')?.name ?? 'responseTime';
  return (['avg', 'p50', 'p95', 'p99'] as const).map((a) => [`responseTime_${a}`, timed, a]);
}

export function checkSummary(kind: AnalyticsKind, check: StoredCheck, rows: readonly RollupRecord[]) {
  const fields = batchFields(kind);
  const metrics: RequestedMetric[] = [
    { name: 'availability', base: 'availability', def: undefined, aggregation: null },
    ...fields.map(([name, base, aggregation]) => ({
      name,
      base,
      def: kind.metrics.find((m) => m.name === base),
      aggregation,
    })),
  ];
  const [entry] = aggregatedSeries(rows, {
    kind,
    metrics,
    groupBy: undefined,
    intervalHours: undefined,
    fromHour: 0,
    toHour: 1,
  });
  return { checkId: check.id, checkType: check.checkType, ...(entry?.data[0] ?? {}) };
}
