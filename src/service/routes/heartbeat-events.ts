/**
 * Heartbeat events and availability (operations 10 and 11 of the spec, and the reference's read of
 * one event). Definitions of the states and of the success ratio: docs/api.md "Heartbeats".
 */
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyPluginAsync } from 'fastify';
import { type Static, Type } from 'typebox';
import { BadRequestError, NotFoundError } from '../http/errors.ts';
import type { HeartbeatEvent, HeartbeatRepo } from '../store/heartbeat-dashboard-types.ts';
import type { Store } from '../store/store.ts';
import { commonErrors, Nullable } from './schemas.ts';

const DAY_MS = 86_400_000;
export const EVENTS_LIMIT_MAX = 10;

const CheckParams = Type.Object({ checkId: Type.String({ minLength: 1 }) });
const EventParams = Type.Object({ checkId: Type.String({ minLength: 1 }), id: Type.String({ minLength: 1 }) });

/** The reference types these as `date`; a full ISO 8601 date-time is accepted too (see parseTime). */
const TimeRange = {
  startTime: Type.Optional(Type.String({ minLength: 1 })),
  endTime: Type.Optional(Type.String({ minLength: 1 })),
};
const EventsQuery = Type.Object({
  ...TimeRange,
  limit: Type.Number({ minimum: 1, maximum: EVENTS_LIMIT_MAX, default: EVENTS_LIMIT_MAX }),
});
const AvailabilityQuery = Type.Object(TimeRange);

const EventSchema = Type.Object({
  id: Type.String(),
  state: Type.Enum(['FAILING', 'EARLY', 'RECEIVED', 'GRACE', 'LATE']),
  timestamp: Type.String({ format: 'date-time' }),
  source: Nullable(Type.String()),
  userAgent: Nullable(Type.String()),
});

/** HeartbeatsV1AvailabilityResponse: null when neither period has an event. */
export const AvailabilitySchema = Nullable(
  Type.Object({
    successRatio: Type.Object({ previousPeriod: Type.Number(), currentPeriod: Type.Number() }),
    totalEntitiesCurrentPeriod: Type.Number(),
  }),
);
export type Availability = Static<typeof AvailabilitySchema>;

const StatsSchema = Type.Object({ last24Hours: AvailabilitySchema, last7Days: AvailabilitySchema });

const eventView = (e: HeartbeatEvent): Static<typeof EventSchema> => ({
  id: e.id,
  state: e.state,
  timestamp: new Date(e.atMs).toISOString(),
  source: e.source,
  userAgent: e.userAgent,
});

/** Percent of the events in [fromMs, toMs) that are pings (RECEIVED or LATE), 2 decimals; 0 without events. */
async function ratio(repo: HeartbeatRepo, accountId: string, checkId: string, fromMs: number, toMs: number) {
  const { total, pings } = await repo.countEvents(accountId, checkId, fromMs, toMs);
  return { total, percent: total === 0 ? 0 : Math.round((pings / total) * 10_000) / 100 };
}

/** The success ratio of [fromMs, toMs) and of the equally long period right before it. */
export async function availability(
  repo: HeartbeatRepo,
  accountId: string,
  checkId: string,
  fromMs: number,
  toMs: number,
): Promise<Availability> {
  const current = await ratio(repo, accountId, checkId, fromMs, toMs);
  const previous = await ratio(repo, accountId, checkId, fromMs - (toMs - fromMs), fromMs);
  if (current.total === 0 && previous.total === 0) return null;
  return {
    successRatio: { previousPeriod: previous.percent, currentPeriod: current.percent },
    totalEntitiesCurrentPeriod: current.total,
  };
}

async function stats(repo: HeartbeatRepo, accountId: string, checkId: string, nowMs: number) {
  // +1: an event stamped this very millisecond belongs to the current period.
  const end = nowMs + 1;
  return {
    last24Hours: await availability(repo, accountId, checkId, end - DAY_MS, end),
    last7Days: await availability(repo, accountId, checkId, end - 7 * DAY_MS, end),
  };
}

const DATE_ONLY = /^\d{4}-\d{2}-\d{2}$/;

/**
 * A query time: a date (YYYY-MM-DD, UTC) or an ISO 8601 date-time. A date-only endTime means the end
 * of that day, so `startTime=2026-05-01&endTime=2026-05-01` covers the whole day.
 */
function parseTime(field: string, value: string | undefined, fallback: number, endOfDay: boolean): number {
  if (value === undefined) return fallback;
  const ms = Date.parse(DATE_ONLY.test(value) ? `${value}T00:00:00.000Z` : value);
  if (Number.isNaN(ms))
    throw new BadRequestError(`querystring/${field} must be a date (YYYY-MM-DD) or an ISO 8601 date-time`);
  return DATE_ONLY.test(value) && endOfDay ? ms + DAY_MS - 1 : ms;
}

function timeRange(query: { startTime?: string; endTime?: string }, nowMs: number): { fromMs: number; toMs: number } {
  const toMs = parseTime('endTime', query.endTime, nowMs, true);
  const fromMs = parseTime('startTime', query.startTime, toMs - DAY_MS, false);
  if (fromMs > toMs) throw new BadRequestError('querystring/startTime must not be after endTime');
  return { fromMs, toMs };
}

export const heartbeatEventRoutes: FastifyPluginAsync<{ store: Store; now?: () => number }> = async (
  fastify,
  { store, now = Date.now },
) => {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();

  /** 404 unless checkId is a heartbeat check of this account. */
  async function requireHeartbeat(accountId: string, checkId: string): Promise<void> {
    const check = await store.checks.get(accountId, checkId);
    if (check?.checkType !== 'HEARTBEAT') throw new NotFoundError('Heartbeat check not found');
  }

  app.get(
    '/v1/checks/heartbeats/:checkId/events',
    {
      schema: {
        params: CheckParams,
        querystring: EventsQuery,
        response: {
          200: Type.Array(Type.Object({ events: Type.Array(EventSchema), stats: StatsSchema })),
          ...commonErrors,
        },
      },
    },
    async (request) => {
      const accountId = request.account.id;
      const { checkId } = request.params;
      await requireHeartbeat(accountId, checkId);
      const nowMs = now();
      const { fromMs, toMs } = timeRange(request.query, nowMs);
      const events = await store.heartbeats.listEvents(accountId, checkId, {
        fromMs,
        toMs,
        limit: Math.floor(request.query.limit),
      });
      return [{ events: events.map(eventView), stats: await stats(store.heartbeats, accountId, checkId, nowMs) }];
    },
  );

  app.get(
    '/v1/checks/heartbeats/:checkId/events/:id',
    {
      schema: {
        params: EventParams,
        response: { 200: Type.Object({ event: EventSchema, stats: StatsSchema }), ...commonErrors },
      },
    },
    async (request) => {
      const accountId = request.account.id;
      const { checkId, id } = request.params;
      await requireHeartbeat(accountId, checkId);
      const event = await store.heartbeats.getEvent(accountId, checkId, id);
      if (!event) throw new NotFoundError('Heartbeat event not found');
      return { event: eventView(event), stats: await stats(store.heartbeats, accountId, checkId, now()) };
    },
  );

  app.get(
    '/v1/checks/heartbeats/:checkId/availability',
    {
      schema: {
        params: CheckParams,
        querystring: AvailabilityQuery,
        response: { 200: AvailabilitySchema, ...commonErrors },
      },
    },
    async (request) => {
      const accountId = request.account.id;
      const { checkId } = request.params;
      await requireHeartbeat(accountId, checkId);
      const { fromMs, toMs } = timeRange(request.query, now());
      // [fromMs, toMs] inclusive of its end, as the events list is.
      return availability(store.heartbeats, accountId, checkId, fromMs, toMs + 1);
    },
  );
};
