/**
 * A histogram of response times in logarithmic buckets, eight per doubling: any percentile read
 * from it is within about 4.5 % of the exact value, and a bucket list stays small enough to keep one
 * per check per hour (./repos/check-stats.ts). HDR-histogram style, without the dependency.
 */

/** Bucket index → count; sparse, as JSON stores it. */
export type Histogram = Record<string, number>;

const BUCKETS_PER_DOUBLING = 8;

/** The bucket of a response time: 0 holds everything up to 1 ms. */
export function bucketOf(ms: number): number {
  return ms <= 1 ? 0 : Math.ceil(Math.log2(ms) * BUCKETS_PER_DOUBLING);
}

/** The value a bucket stands for: the geometric middle of its bounds, so the error is split both ways. */
export function bucketValue(bucket: number): number {
  return bucket === 0 ? 1 : 2 ** ((bucket - 0.5) / BUCKETS_PER_DOUBLING);
}

export function addTo(histogram: Histogram, ms: number, count = 1): void {
  const key = String(bucketOf(ms));
  histogram[key] = (histogram[key] ?? 0) + count;
}

export function mergeInto(target: Histogram, source: Histogram): void {
  for (const [key, count] of Object.entries(source)) target[key] = (target[key] ?? 0) + count;
}

/** The given percentiles (0-100) of a histogram holding `total` samples, rounded to whole ms. */
export function percentiles(histogram: Histogram, total: number, wanted: readonly number[]): number[] {
  const buckets = Object.entries(histogram)
    .map(([key, count]) => [Number(key), count] as const)
    .sort((a, b) => a[0] - b[0]);
  return wanted.map((p) => {
    const rank = Math.max(1, Math.ceil((p / 100) * total));
    let seen = 0;
    for (const [bucket, count] of buckets) {
      seen += count;
      if (seen >= rank) return Math.round(bucketValue(bucket));
    }
    return Math.round(bucketValue(buckets.at(-1)?.[0] ?? 0));
  });
}

/**
 * Dense histograms for merging many stored ones fast (a report over every check reads tens of
 * thousands of rollup rows): index = bucket. 256 buckets reach past 2^31 ms; anything above lands in
 * the last one.
 */
export const DENSE_BUCKETS = 256;

/** Adds a stored histogram's JSON text (`{"12":3,...}`) into `dense` without building an object. */
export function addJsonTo(dense: Float64Array, text: string): void {
  let i = 0;
  for (;;) {
    const quote = text.indexOf('"', i);
    if (quote < 0) return;
    let j = quote + 1;
    let key = 0;
    for (let c = text.charCodeAt(j); c >= 48 && c <= 57; c = text.charCodeAt(++j)) key = key * 10 + (c - 48);
    j += 2; // past `":`
    let count = 0;
    for (let c = text.charCodeAt(j); c >= 48 && c <= 57; c = text.charCodeAt(++j)) count = count * 10 + (c - 48);
    const index = Math.min(key, DENSE_BUCKETS - 1);
    dense[index] = (dense[index] ?? 0) + count;
    i = j;
  }
}

/** percentiles() of a dense histogram. */
export function densePercentiles(dense: Float64Array, total: number, wanted: readonly number[]): number[] {
  return wanted.map((p) => {
    const rank = Math.max(1, Math.ceil((p / 100) * total));
    let seen = 0;
    let last = 0;
    for (let bucket = 0; bucket < dense.length; bucket++) {
      const count = dense[bucket] ?? 0;
      if (count === 0) continue;
      last = bucket;
      seen += count;
      if (seen >= rank) return Math.round(bucketValue(bucket));
    }
    return Math.round(bucketValue(last));
  });
}
