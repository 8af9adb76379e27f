/**
 * The analytics API (reference: Analytics): GET /v1/analytics/<type>/{id} for each check type the
 * service stores (../analytics/catalog.ts), GET /v1/analytics/metrics and POST /v1/analytics/checks.
 * Aggregated figures come from the hourly rollups, so they are at hour resolution: an
 * aggregationInterval is rounded up to whole hours, and a window counts the hour of its `from` whole.
 * Metrics without an aggregation suffix ask for raw data points: a page (limit, page) of the stored
 * results, which are kept RESULT_RETENTION_DAYS.
 */
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyPluginAsync } from 'fastify';
import { type Static, type TSchema, Type } from 'typebox';
import { CHECK_TYPES } from '../../shared/checks/types.ts';
import { type AnalyticsKind, type GroupBy, kindOfCheckType, servedKinds } from '../analytics/catalog.ts';
import {
  aggregatedSeries,
  isRawQuery,
  parseMetrics,
  type RequestedMetric,
  rawSeries,
  type SeriesEntry,
} from '../analytics/series.ts';
import { checkSummary, metricDescriptors, metadataOf } from '../analytics/summary.ts';
import { hoursOf, resolveWindow, type TimeWindow } from '../analytics/window.ts';
import { BadRequestError, NotFoundError } from '../http/errors.ts';
import type { RollupRecord } from '../store/analytics-types.ts';
import type { Store, StoredCheck } from '../store/store.ts';
import { literals, quickRanges, REFERENCE_CHECK_TYPES, windowBounds } from './query-schemas.ts';
import { commonErrors, IdParams } from './schemas.ts';

/** The check types the service stores: the protocol's and heartbeats. */
export const SERVED_CHECK_TYPES: readonly string[] = [...CHECK_TYPES, 'HEARTBEAT'];

const BATCH_RANGES = ['last24Hours', 'last7Days', 'thisWeek', 'lastWeek', 'lastMonth'] as const;

function queryOf(kind: AnalyticsKind) {
  return Type.Object({
    ...windowBounds(),
    quickRange: Type.Optional(literals(quickRanges('last24Hours'))),
    ...(kind.intervals
      ? {
          aggregationInterval: Type.Optional(
            Type.Number({
              minimum: 1,
              maximum: 43200,
              description: 'Minutes per data row, rounded up to whole hours.',
            }),
          ),
        }
      : {}),
    filterByStatus: Type.Optional(Type.Array(literals(['success', 'failure']), { maxItems: 2 })),
    ...(kind.groupBy.length > 0 ? { groupBy: Type.Optional(literals(kind.groupBy)) } : {}),
    metrics: Type.Optional(
      Type.Array(Type.String({ maxLength: 1000 }), {
        maxItems: 200,
        description: 'Required: metric names, repeated or comma-separated.',
      }),
    ),
    'metrics[]': Type.Optional(Type.Array(Type.String({ maxLength: 1000 }), { maxItems: 200 })),
    limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 100, default: 10 })),
    page: Type.Optional(Type.Integer({ minimum: 1, maximum: 100_000, default: 1 })),
  });
}

interface AnalyticsQuery {
  from?: string;
  to?: string;
  quickRange?: string;
  aggregationInterval?: number;
  filterByStatus?: string[];
  groupBy?: GroupBy;
  metrics?: string[];
  'metrics[]'?: string[];
  limit?: number;
  page?: number;
}

const Row = Type.Object({}, { additionalProperties: true });
const MetricMetadata = Type.Object({
  unit: Type.String(),
  label: Type.String(),
  aggregation: Type.Optional(Type.String()),
});
const AnalyticsResponse = Type.Object({
  checkId: Type.String(),
  name: Type.String(),
  checkType: Type.String(),
  activated: Type.Boolean(),
  muted: Type.Boolean(),
  frequency: Type.Number(),
  from: Type.String({ format: 'date-time' }),
  to: Type.String({ format: 'date-time' }),
  tags: Type.Array(Type.String()),
  series: Type.Array(Type.Object({ data: Type.Array(Row) }, { additionalProperties: true })),
  pagination: Type.Object({ page: Type.Number(), limit: Type.Number() }),
  metadata: Type.Record(Type.String(), MetricMetadata),
});

/** `success` alone: passed runs only; `failure` alone: failed ones; both or neither: all. */
function outcomeFilter(statuses: readonly string[] | undefined): boolean | undefined {
  const set = new Set(statuses ?? []);
  if (set.size !== 1) return undefined;
  return set.has('failure');
}

export const tagsOf = (check: StoredCheck): string[] =>
  Array.isArray(check.body.tags) ? check.body.tags.filter((t): t is string => typeof t === 'string') : [];

/** A heartbeat's events counted per hour, in the shape of rollup rows: a ping is a passed run, a missed deadline a failed one. */
async function heartbeatRollups(store: Store, check: StoredCheck, window: TimeWindow): Promise<RollupRecord[]> {
  const { fromHour, toHour } = hoursOf(window);
  const hours = await store.analytics.heartbeatHours(
    check.accountId,
    check.id,
    fromHour * 3_600_000,
    toHour * 3_600_000,
  );
  const base = {
    checkId: check.id,
    location: '',
    statusCode: 0,
    totalMs: 0,
    minMs: 0,
    maxMs: 0,
    sqMs: 0,
    retries: 0,
    histogram: '{}',
    metrics: '{}',
  };
  return hours.flatMap((h) => [
    { ...base, hour: h.hour, failed: false, runs: h.received, failures: 0 },
    { ...base, hour: h.hour, failed: true, runs: h.failing, failures: h.failing },
  ]);
}

async function seriesOf(
  store: Store,
  kind: AnalyticsKind,
  check: StoredCheck,
  q: AnalyticsQuery,
  metrics: RequestedMetric[],
  window: TimeWindow,
) {
  const limit = q.limit ?? 10;
  const page = q.page ?? 1;
  const failed = outcomeFilter(q.filterByStatus);
  if (isRawQuery(metrics)) {
    const w = { fromIso: new Date(window.fromMs).toISOString(), toIso: new Date(window.toMs).toISOString() };
    const results = await store.analytics.rawResults(check.accountId, check.id, w, {
      limit,
      offset: (page - 1) * limit,
      ...(failed === undefined ? {} : { failed }),
    });
    return rawSeries(results, { kind, metrics, groupBy: q.groupBy });
  }
  const { fromHour, toHour } = hoursOf(window);
  const all =
    kind.checkType === 'HEARTBEAT'
      ? await heartbeatRollups(store, check, window)
      : await store.analytics.rollupsOfCheck(check.accountId, check.id, fromHour, toHour);
  const rows = failed === undefined ? all : all.filter((r) => r.failed === failed);
  const intervalHours = q.aggregationInterval === undefined ? undefined : Math.ceil(q.aggregationInterval / 60);
  const series: SeriesEntry[] = aggregatedSeries(rows, {
    kind,
    metrics,
    groupBy: q.groupBy,
    intervalHours,
    fromHour,
    toHour,
  });
  // Groups are what pages page through; without groupBy there is one series, on page 1.
  return series.slice((page - 1) * limit, page * limit);
}

function routeOf(store: Store, kind: AnalyticsKind): FastifyPluginAsync {
  return async (fastify) => {
    const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
    const schema = {
      tags: ['Analytics'],
      params: IdParams,
      querystring: queryOf(kind) as TSchema,
      response: { 200: AnalyticsResponse, ...commonErrors },
    };
    app.get(`/v1/analytics/${kind.path}/:id`, { schema }, async (request) => {
      const q = request.query as AnalyticsQuery;
      const check = await store.checks.get(request.account.id, request.params.id);
      // Another account's check, a missing one and one of another type all read as not found.
      if (!check || check.checkType !== kind.checkType) throw new NotFoundError('Check not found');
      if (q.groupBy === 'pageIndex')
        throw new BadRequestError(
          'querystring/groupBy: pageIndex is not supported: browser results do not record per-page figures',
        );
      const metrics = parseMetrics(kind, [...(q.metrics ?? []), ...(q['metrics[]'] ?? [])]);
      const window = resolveWindow(q, Date.now(), 'last24Hours');
      const series = await seriesOf(store, kind, check, q, metrics, window);
      return {
        checkId: check.id,
        name: check.name,
        checkType: check.checkType,
        activated: check.activated,
        muted: check.muted,
        frequency: check.frequency,
        from: new Date(window.fromMs).toISOString(),
        to: new Date(window.toMs).toISOString(),
        tags: tagsOf(check),
        series,
        pagination: { page: q.page ?? 1, limit: q.limit ?? 10 },
        metadata: metadataOf(metrics),
      };
    });
  };
}

const MetricsQuery = Type.Object({ checkType: literals(REFERENCE_CHECK_TYPES) });
const MetricDescriptor = Type.Object({
  name: Type.String(),
  unit: Type.String(),
  label: Type.String(),
  type: Type.String(),
  aggregated: Type.Boolean(),
});
const BatchBody = Type.Object(
  { checkIds: Type.Array(Type.String({ minLength: 1, format: 'uuid' }), { minItems: 1, maxItems: 100 }) },
  { additionalProperties: false },
);
const BatchItem = Type.Object({ checkId: Type.String(), checkType: Type.String() }, { additionalProperties: true });

export const analyticsRoutes: FastifyPluginAsync<{ store: Store; checkTypes?: readonly string[] }> = async (
  fastify,
  { store, checkTypes = SERVED_CHECK_TYPES },
) => {
  const kinds = servedKinds(checkTypes);
  for (const kind of kinds) await fastify.register(routeOf(store, kind));
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  app.get(
    '/v1/analytics/metrics',
    {
      schema: {
        tags: ['Analytics'],
        querystring: MetricsQuery,
        response: { 200: Type.Array(MetricDescriptor), ...commonErrors },
      },
    },
    // A type of the reference the service does not serve has no metrics here.
    async (request) => metricDescriptors(kinds.find((k) => k.checkType === request.query.checkType)),
  );
  app.post(
    '/v1/analytics/checks',
    {
      schema: {
        tags: ['Analytics'],
        querystring: Type.Object({ quickRange: Type.Optional(literals(BATCH_RANGES)) }),
        body: BatchBody,
        response: { 200: Type.Array(BatchItem), ...commonErrors },
      },
    },
    async (request) => {
      const window = resolveWindow(
        { quickRange: request.query.quickRange ?? 'last24Hours' },
        Date.now(),
        'last24Hours',
      );
      const out: Static<typeof BatchItem>[] = [];
      for (const id of new Set(request.body.checkIds)) {
        // Checks that are not the account's (or not served) are left out, as if they did not exist.
        const check = await store.checks.get(request.account.id, id);
        const kind =
          check && kinds.includes(kindOfCheckType(check.checkType) as AnalyticsKind)
            ? kindOfCheckType(check.checkType)
            : undefined;
        if (!check || !kind) continue;
        const rows =
          kind.checkType === 'HEARTBEAT'
            ? await heartbeatRollups(store, check, window)
            : await rollupsOf(store, check, window);
        out.push(checkSummary(kind, check, rows));
      }
      return out;
    },
  );
};

function rollupsOf(store: Store, check: StoredCheck, window: TimeWindow): Promise<RollupRecord[]> {
  const { fromHour, toHour } = hoursOf(window);
  return store.analytics.rollupsOfCheck(check.accountId, check.id, fromHour, toHour);
}
