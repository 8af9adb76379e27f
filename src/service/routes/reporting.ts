/**
 * GET /v1/reporting (reference: Reporting): every check of the account, or those with the given tags
 * or activation, with its success ratio and response-time average, p95 and p99 over a window, whole
 * (`aggregate`) or per calendar bucket (`aggregates`, with `granularity` and `timezone`). One read of
 * the account's hourly rollups over the window (the (account_id, hour) index), merged here.
 */
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyPluginAsync } from 'fastify';
import { type Static, Type } from 'typebox';
import { calendarBuckets, checkTimeZone, type Granularity } from '../analytics/calendar.ts';
import { hoursOf, HOUR_MS, resolveWindow } from '../analytics/window.ts';
import type { ReportRollup } from '../store/analytics-types.ts';
import { addJsonTo, DENSE_BUCKETS, densePercentiles } from '../store/response-histogram.ts';
import type { Store } from '../store/store.ts';
import { literals, quickRanges, windowBounds } from './query-schemas.ts';
import { commonErrors } from './schemas.ts';

const Query = Type.Object({
  ...windowBounds(),
  quickRange: Type.Optional(literals(quickRanges('last24Hrs'))),
  filterByTags: Type.Optional(
    Type.Array(Type.String({ maxLength: 200 }), {
      maxItems: 50,
      description: 'Only checks that have every one of these tags.',
    }),
  ),
  deactivated: Type.Optional(Type.Boolean()),
  granularity: Type.Optional(literals(['day', 'week', 'month'])),
  timezone: Type.Optional(Type.String({ minLength: 1, maxLength: 64 })),
});

const Figures = {
  successRatio: Type.Number({ minimum: 0 }),
  avg: Type.Number({ minimum: 0 }),
  p95: Type.Number({ minimum: 0 }),
  p99: Type.Number({ minimum: 0 }),
};
const Reporting = Type.Object({
  name: Type.String(),
  checkId: Type.String(),
  checkType: Type.String(),
  deactivated: Type.Boolean(),
  tags: Type.Array(Type.String()),
  aggregate: Type.Optional(Type.Object(Figures)),
  aggregates: Type.Optional(Type.Array(Type.Object({ ...Figures, from: Type.String(), to: Type.String() }))),
});

interface Totals {
  runs: number;
  failures: number;
  totalMs: number;
  minMs: number;
  maxMs: number;
  /** Dense, merged straight from the rows' JSON, so no row is parsed into objects. */
  histogram: Float64Array;
}

const emptyTotals = (): Totals => ({
  runs: 0,
  failures: 0,
  totalMs: 0,
  minMs: Number.POSITIVE_INFINITY,
  maxMs: 0,
  histogram: new Float64Array(DENSE_BUCKETS),
});

function add(t: Totals, row: ReportRollup): void {
  t.runs += row.runs;
  t.failures += row.failures;
  t.totalMs += row.totalMs;
  t.minMs = Math.min(t.minMs, row.minMs);
  t.maxMs = Math.max(t.maxMs, row.maxMs);
  addJsonTo(t.histogram, row.histogram);
}

/** A check without runs in the window reports zeros: the reference's fields are required numbers. */
function figuresOf(t: Totals): Static<typeof Reporting>['aggregate'] & object {
  if (t.runs === 0) return { successRatio: 0, avg: 0, p95: 0, p99: 0 };
  const [p95 = 0, p99 = 0] = densePercentiles(t.histogram, t.runs, [95, 99]).map((p) =>
    Math.min(t.maxMs, Math.max(t.minMs, p)),
  );
  const successRatio = Math.round(((t.runs - t.failures) / t.runs) * 100 * 10_000) / 10_000;
  return { successRatio, avg: Math.round((t.totalMs / t.runs) * 1000) / 1000, p95, p99 };
}

/** Index of the bucket holding `hour` (its start), or -1; buckets are ascending and contiguous. */
function bucketIndex(buckets: ReadonlyArray<{ fromMs: number; toMs: number }>, hour: number): number {
  const ms = hour * HOUR_MS;
  let lo = 0;
  let hi = buckets.length - 1;
  while (lo <= hi) {
    const mid = (lo + hi) >> 1;
    const b = buckets[mid] as { fromMs: number; toMs: number };
    if (ms < b.fromMs && mid > 0) hi = mid - 1;
    else if (ms >= b.toMs) lo = mid + 1;
    else return mid;
  }
  return -1;
}

export const reportingRoutes: FastifyPluginAsync<{ store: Store }> = async (fastify, { store }) => {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  app.get(
    '/v1/reporting',
    { schema: { tags: ['Reporting'], querystring: Query, response: { 200: Type.Array(Reporting), ...commonErrors } } },
    async (request) => {
      const q = request.query;
      const tz = q.timezone === undefined ? 'UTC' : checkTimeZone(q.timezone);
      const window = resolveWindow(q, Date.now(), 'last24Hrs');
      const buckets = q.granularity
        ? calendarBuckets(window.fromMs, window.toMs, q.granularity as Granularity, tz)
        : undefined;
      const wanted = new Set(q.filterByTags ?? []);
      const checks = (await store.checks.listSummaries(request.account.id)).filter(
        (c) =>
          (q.deactivated === undefined || q.deactivated === !c.activated) &&
          [...wanted].every((t) => c.tags.includes(t)),
      );
      const { fromHour, toHour } = hoursOf(window);
      const totals = new Map<string, Totals[]>();
      for (const row of await store.analytics.rollupsOfAccount(request.account.id, fromHour, toHour)) {
        const i = buckets ? bucketIndex(buckets, row.hour) : 0;
        if (i < 0) continue;
        const perBucket = totals.get(row.checkId) ?? [];
        totals.set(row.checkId, perBucket);
        perBucket[i] ??= emptyTotals();
        add(perBucket[i], row);
      }
      return checks.map((c) => {
        const perBucket = totals.get(c.id) ?? [];
        const base = { name: c.name, checkId: c.id, checkType: c.checkType, deactivated: !c.activated, tags: c.tags };
        if (!buckets) return { ...base, aggregate: figuresOf(perBucket[0] ?? emptyTotals()) };
        // Buckets without runs are left out, as the reference says.
        const aggregates = buckets.flatMap((b, i) => {
          const t = perBucket[i];
          return t && t.runs > 0
            ? [{ ...figuresOf(t), from: new Date(b.fromMs).toISOString(), to: new Date(b.toMs).toISOString() }]
            : [];
        });
        return { ...base, aggregates };
      });
    },
  );
};
