/**
 * The alert history (the reference's CheckAlert): one entry per alerting state transition of a
 * check, newest first, within a window of at most six hours given as UNIX seconds (`from`, `to`).
 */
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyPluginAsync } from 'fastify';
import { type Static, Type } from 'typebox';
import { BadRequestError, NotFoundError } from '../http/errors.ts';
import type { CheckAlertRecord } from '../store/check-status-types.ts';
import type { Store } from '../store/store.ts';
import { commonErrors, Nullable, PageNumberQuery } from './schemas.ts';

/** The widest window the reference serves. */
export const ALERT_WINDOW_SECONDS = 6 * 60 * 60;
/** 9999-12-31T23:59:59Z: the last second an ISO date string holds. */
export const MAX_UNIX_SECONDS = 253_402_300_799;

/** The reference's alertType values; this service records the transitions among them (alerting/state-machine.ts). */
const ALERT_TYPES = [
  'NO_ALERT',
  'ALERT_FAILURE',
  'ALERT_FAILURE_REMAIN',
  'ALERT_FAILURE_DEGRADED',
  'ALERT_RECOVERY',
  'ALERT_DEGRADED',
  'ALERT_DEGRADED_REMAIN',
  'ALERT_DEGRADED_FAILURE',
  'ALERT_DEGRADED_RECOVERY',
  'ALERT_SSL',
] as const;

const Params = Type.Object({ checkId: Type.String({ minLength: 1 }) });
/** `from` and `to` of a time-windowed list: UNIX seconds. */
export const WindowQuery = () => {
  const UnixSeconds = Type.Integer({ minimum: 0, maximum: MAX_UNIX_SECONDS });
  return { from: Type.Optional(UnixSeconds), to: Type.Optional(UnixSeconds) };
};
const Query = Type.Object({ ...PageNumberQuery(10), ...WindowQuery() });

const CheckAlertSchema = Type.Object({
  id: Type.String(),
  name: Type.String(),
  checkId: Type.String(),
  alertType: Type.Enum([...ALERT_TYPES]),
  checkType: Type.String(),
  runLocation: Type.String(),
  responseTime: Type.Number(),
  error: Nullable(Type.String()),
  statusCode: Nullable(Type.String()),
  created_at: Type.String({ format: 'date-time' }),
  startedAt: Type.String({ format: 'date-time' }),
});

const alertView = (a: CheckAlertRecord): Static<typeof CheckAlertSchema> => ({
  id: String(a.id),
  name: a.name,
  checkId: a.checkId,
  alertType: a.alertType,
  checkType: a.checkType,
  runLocation: a.runLocation,
  responseTime: a.responseTime,
  error: a.error,
  statusCode: a.statusCode,
  created_at: a.createdAt,
  startedAt: a.startedAt,
});

/**
 * The reference's window rules (`windowSeconds`: six hours for check alerts): neither bound means
 * the last window up to now; one bound means a window from or up to it; both must be at most a
 * window apart, `from` before `to`.
 */
export function alertWindow(
  from: number | undefined,
  to: number | undefined,
  nowMs: number,
  windowSeconds = ALERT_WINDOW_SECONDS,
): { from: string; to: string } {
  const windowMs = windowSeconds * 1000;
  // `to` is exclusive: "now" as the default end must still include what was written this millisecond.
  const end = to !== undefined ? to * 1000 : from !== undefined ? from * 1000 + windowMs : nowMs + 1;
  const start = from !== undefined ? from * 1000 : end - windowMs;
  if (start >= end)
    throw new BadRequestError('querystring/from must be before querystring/to (UNIX timestamps in seconds)');
  if (end - start > windowMs) {
    throw new BadRequestError(
      `querystring/from and querystring/to must be at most ${windowSeconds} seconds (${windowSeconds / 3600} hours) apart`,
    );
  }
  // When only `from` is given, the window may end past the last representable second.
  const iso = (ms: number) => new Date(Math.min(ms, (MAX_UNIX_SECONDS + 1) * 1000)).toISOString();
  return { from: iso(start), to: iso(end) };
}

export const checkAlertRoutes: FastifyPluginAsync<{ store: Store }> = async (fastify, { store }) => {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  const schema = { querystring: Query, response: { 200: Type.Array(CheckAlertSchema), ...commonErrors } };

  app.get('/v1/check-alerts', { schema }, async (request) => {
    const { limit, page, from, to } = request.query;
    const window = alertWindow(from, to, Date.now());
    return (await store.checkAlerts.list(request.account.id, { ...window, limit, page })).map(alertView);
  });

  app.get('/v1/check-alerts/:checkId', { schema: { ...schema, params: Params } }, async (request) => {
    const accountId = request.account.id;
    // Another account's check is a 404 like a missing one, never an empty list.
    if (!(await store.checks.get(accountId, request.params.checkId))) throw new NotFoundError('Check not found');
    const { limit, page, from, to } = request.query;
    const window = alertWindow(from, to, Date.now());
    return (await store.checkAlerts.list(accountId, { ...window, checkId: request.params.checkId, limit, page })).map(
      alertView,
    );
  });
};
