/**
 * GET /v1/private-locations/{id}/metrics: a location's queue over a window of time, as the reference
 * defines it (privateLocationsMetricsHistoryResponseSchema): one entry a minute with the queue size
 * and the age in seconds of the oldest queued run, from the samples metrics/location-sampler.ts
 * takes. `from` and `to` are required; `from` at most 15 days back, as long as samples are kept.
 */
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyPluginAsync } from 'fastify';
import { type Static, Type } from 'typebox';
import { BadRequestError, NotFoundError } from '../http/errors.ts';
import { LOCATION_METRICS_RETENTION_MS } from '../metrics/location-sampler.ts';
import type { LocationMetricSample } from '../store/dispatch-types.ts';
import type { Store } from '../store/store.ts';
import { MAX_UNIX_SECONDS } from './check-alerts.ts';
import { commonErrors, IdParams } from './schemas.ts';

const BOUND = 'a UNIX timestamp in seconds or an ISO 8601 date or date-time';
const Query = Type.Object({
  from: Type.String({
    minLength: 1,
    maxLength: 40,
    description: `Start of the window, ${BOUND}; less than 15 days ago.`,
  }),
  to: Type.String({ minLength: 1, maxLength: 40, description: `End of the window (inclusive), ${BOUND}.` }),
});

const MetricsHistorySchema = Type.Object({
  timestamps: Type.Array(Type.String({ format: 'date-time' })),
  queueSize: Type.Array(Type.Number()),
  oldestScheduledCheckRun: Type.Array(Type.Number({ description: 'Age in seconds of the oldest queued run.' })),
});

const UNIX_SECONDS = /^\d{1,12}$/;
const ISO_8601 = /^\d{4}-\d{2}-\d{2}(T\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:\d{2}))?$/i;

/** The reference describes both bounds as UNIX timestamps but types them `date`: either is taken. */
export function parseInstant(name: 'from' | 'to', value: string): number {
  const ms = UNIX_SECONDS.test(value) ? Number(value) * 1000 : ISO_8601.test(value) ? Date.parse(value) : Number.NaN;
  if (Number.isNaN(ms)) throw new BadRequestError(`querystring/${name} must be ${BOUND}`);
  return ms;
}

/** The window the query names, checked against the reference's rules. */
export function metricsWindow(query: Static<typeof Query>, nowMs: number): { from: string; to: string } {
  const from = parseInstant('from', query.from);
  const to = parseInstant('to', query.to);
  if (from < nowMs - LOCATION_METRICS_RETENTION_MS)
    throw new BadRequestError('querystring/from must be less than 15 days ago');
  if (from > to) throw new BadRequestError('querystring/from must not be after querystring/to');
  // Past year 9999 an ISO string gains a sign and would sort before every sample.
  return { from: new Date(from).toISOString(), to: new Date(Math.min(to, MAX_UNIX_SECONDS * 1000)).toISOString() };
}

const historyView = (samples: readonly LocationMetricSample[]): Static<typeof MetricsHistorySchema> => ({
  timestamps: samples.map((s) => s.sampledAt),
  queueSize: samples.map((s) => s.queueSize),
  oldestScheduledCheckRun: samples.map((s) => s.oldestQueuedSeconds),
});

export const privateLocationMetricsRoutes: FastifyPluginAsync<{ store: Store }> = async (fastify, { store }) => {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  app.get(
    '/v1/private-locations/:id/metrics',
    { schema: { params: IdParams, querystring: Query, response: { 200: MetricsHistorySchema, ...commonErrors } } },
    async (request) => {
      // Another account's location is a 404 like a missing one.
      const location = await store.locations.get(request.account.id, request.params.id);
      if (!location) throw new NotFoundError('Private location not found');
      const window = metricsWindow(request.query, Date.now());
      return historyView(await store.locationMetrics.list(location.id, window.from, window.to));
    },
  );
};
