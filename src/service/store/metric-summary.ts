/**
 * What an hourly rollup keeps of one measured metric (a timing phase, an ICMP latency, ...): enough to
 * give every aggregation the analytics API offers without the results themselves. Count, sum and sum
 * of squares give avg, sum and stddev; the bounds give min and max; the histogram gives percentiles
 * (./response-histogram.ts, within ~4.5 %). Short keys: this is stored as JSON on every rollup row.
 */
import { addTo, type Histogram, mergeInto, percentiles } from './response-histogram.ts';

export interface MetricSummary {
  n: number;
  s: number;
  q: number;
  mn: number;
  mx: number;
  h: Histogram;
}

/** Metric name → summary: a rollup row's `metrics` column. */
export type MetricSummaries = Record<string, MetricSummary>;

export const emptySummary = (): MetricSummary => ({
  n: 0,
  s: 0,
  q: 0,
  mn: Number.POSITIVE_INFINITY,
  mx: Number.NEGATIVE_INFINITY,
  h: {},
});

export function addValue(summary: MetricSummary, value: number): void {
  summary.n += 1;
  summary.s += value;
  summary.q += value * value;
  summary.mn = Math.min(summary.mn, value);
  summary.mx = Math.max(summary.mx, value);
  addTo(summary.h, value);
}

export function mergeSummary(target: MetricSummary, source: MetricSummary): void {
  target.n += source.n;
  target.s += source.s;
  target.q += source.q;
  target.mn = Math.min(target.mn, source.mn);
  target.mx = Math.max(target.mx, source.mx);
  mergeInto(target.h, source.h);
}

export function addValues(summaries: MetricSummaries, values: Record<string, number>): void {
  for (const [name, value] of Object.entries(values)) {
    summaries[name] ??= emptySummary();
    addValue(summaries[name], value);
  }
}

export function mergeSummaries(target: MetricSummaries, source: MetricSummaries): void {
  for (const [name, summary] of Object.entries(source)) {
    target[name] ??= emptySummary();
    mergeSummary(target[name], summary);
  }
}

/**
 * One aggregation of a summary, null without values. A percentile is read from the histogram and
 * clamped to what was measured (a bucket's middle can lie outside it); median is p50.
 */
export function aggregate(summary: MetricSummary | undefined, aggregation: string): number | null {
  if (!summary || summary.n === 0) return null;
  const { n, s, q, mn, mx } = summary;
  switch (aggregation) {
    case 'avg':
      return s / n;
    case 'sum':
      return s;
    case 'min':
      return mn;
    case 'max':
      return mx;
    case 'stddev':
      // Population standard deviation; rounding can make the variance a hair negative.
      return Math.sqrt(Math.max(0, q / n - (s / n) ** 2));
    default: {
      const p = aggregation === 'median' ? 50 : Number(aggregation.slice(1));
      const [value = 0] = percentiles(summary.h, n, [p]);
      return Math.min(mx, Math.max(mn, value));
    }
  }
}
