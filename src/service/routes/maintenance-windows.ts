/**
 * Maintenance windows (/v1/maintenance-windows): one-off or repeating (DAY/WEEK/MONTH every
 * repeatInterval units, until repeatEndsAt) periods that silence alerts of the checks they cover.
 * Which checks, and when, is src/service/alerting/maintenance.ts. PUT updates only the fields given;
 * the merged window is validated as a whole, so a 400 names the field that broke it.
 */
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyPluginAsync } from 'fastify';
import moment from 'moment';
import { type Static, Type } from 'typebox';
import { BadRequestError, NotFoundError } from '../http/errors.ts';
import type { MaintenanceWindow, MaintenanceWindowInput } from '../store/maintenance-window-types.ts';
import type { Store } from '../store/store.ts';
import {
  MaintenanceWindowCreateBody,
  MaintenanceWindowIdParams,
  MaintenanceWindowListQuery,
  MaintenanceWindowResponse,
  MaintenanceWindowUpdateBody,
} from './maintenance-window-schemas.ts';
import { commonErrors, NoContent } from './schemas.ts';

type CreateBody = Static<typeof MaintenanceWindowCreateBody>;
type UpdateBody = Static<typeof MaintenanceWindowUpdateBody>;

const windowNotFound = () => new NotFoundError('Maintenance window not found');
const ISO = /^\d{4}-\d{2}-\d{2}(T\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}:\d{2}))?$/;

/**
 * The UTC instant an ISO date or date-time names, or a 400 naming the field. moment's strict parse
 * refuses dates that do not exist (Date.parse turns 2026-02-31 into March 3rd); the pattern refuses
 * date-times without an offset, which would otherwise be read in the server's zone.
 */
function instant(field: string, value: string): string {
  const parsed = moment.utc(value, moment.ISO_8601, true);
  const ms = ISO.test(value) && parsed.isValid() ? parsed.valueOf() : Number.NaN;
  if (Number.isNaN(ms))
    throw new BadRequestError(
      `body/${field} must be an ISO 8601 date or date-time with an offset, got ${JSON.stringify(value)}`,
    );
  return new Date(ms).toISOString();
}

function checkTimezone(timezone: string | null | undefined): void {
  if (timezone === null || timezone === undefined || timezone === 'UTC') return;
  throw new BadRequestError(`body/timezone: only UTC (or null) is supported, got ${JSON.stringify(timezone)}`);
}

/** The repeat fields, consistent: all null for a one-off window, unit and interval for a repeating one. */
function repeatOf(
  body: CreateBody,
  startsAt: string,
): Pick<MaintenanceWindowInput, 'repeatUnit' | 'repeatInterval' | 'repeatEndsAt'> {
  const unit = body.repeatUnit ?? null;
  const interval = body.repeatInterval ?? null;
  const endsAt = body.repeatEndsAt ?? null;
  if (unit === null) {
    if (interval !== null)
      throw new BadRequestError('body/repeatInterval: only allowed with a repeatUnit (DAY, WEEK or MONTH)');
    if (endsAt !== null)
      throw new BadRequestError('body/repeatEndsAt: only allowed with a repeatUnit (DAY, WEEK or MONTH)');
    return { repeatUnit: null, repeatInterval: null, repeatEndsAt: null };
  }
  if (interval === null) throw new BadRequestError('body/repeatInterval: required (1 to 365) when repeatUnit is set');
  const repeatEndsAt = endsAt === null ? null : instant('repeatEndsAt', endsAt).slice(0, 10);
  if (repeatEndsAt !== null && repeatEndsAt < startsAt.slice(0, 10)) {
    throw new BadRequestError('body/repeatEndsAt: must be on or after the date of startsAt');
  }
  return { repeatUnit: unit, repeatInterval: interval, repeatEndsAt };
}

/** A full, validated window from a create body (or an update merged over the stored window). */
export function windowInput(body: CreateBody): MaintenanceWindowInput {
  checkTimezone(body.timezone);
  if (body.statusPageVisibility?.enabled === true) {
    throw new BadRequestError(
      'body/statusPageVisibility/enabled: showing maintenance windows on status pages is not supported; use false or omit it',
    );
  }
  const startsAt = instant('startsAt', body.startsAt);
  const endsAt = instant('endsAt', body.endsAt);
  if (endsAt <= startsAt) throw new BadRequestError('body/endsAt: must be after startsAt');
  return {
    name: body.name,
    tags: body.tags ?? [],
    startsAt,
    endsAt,
    ...repeatOf(body, startsAt),
    description: body.description ?? null,
    pauseAllChecks: body.pauseAllChecks ?? false,
    silenceAlertsTags: body.silenceAlertsTags ?? [],
    silenceAllAlerts: body.silenceAllAlerts ?? false,
  };
}

/** The stored window as a create body, so an update can be merged over it and validated the same way. */
function asBody(w: MaintenanceWindow): CreateBody {
  const { name, tags, startsAt, endsAt, repeatUnit, repeatInterval, repeatEndsAt, description } = w;
  return {
    name,
    tags,
    startsAt,
    endsAt,
    repeatUnit,
    repeatInterval,
    repeatEndsAt,
    description,
    pauseAllChecks: w.pauseAllChecks,
    silenceAlertsTags: w.silenceAlertsTags,
    silenceAllAlerts: w.silenceAllAlerts,
  };
}

function mergeUpdate(stored: MaintenanceWindow, update: UpdateBody): CreateBody {
  const merged: CreateBody = { ...asBody(stored), ...(update as Partial<CreateBody>) };
  // Turning repeats off clears what only repeats use, unless the request set those too.
  if (update.repeatUnit === null) {
    merged.repeatInterval = update.repeatInterval ?? null;
    merged.repeatEndsAt = update.repeatEndsAt ?? null;
  }
  return merged;
}

function windowView(w: MaintenanceWindow): Static<typeof MaintenanceWindowResponse> {
  const { id, name, tags, startsAt, endsAt, repeatInterval, repeatUnit, repeatEndsAt, description } = w;
  return {
    ...{ id, name, tags, startsAt, endsAt, repeatInterval, repeatUnit, repeatEndsAt, timezone: null, description },
    ...{
      pauseAllChecks: w.pauseAllChecks,
      silenceAlertsTags: w.silenceAlertsTags,
      silenceAllAlerts: w.silenceAllAlerts,
    },
    ...{ created_at: w.createdAt, updated_at: w.updatedAt },
  };
}

export const maintenanceWindowRoutes: FastifyPluginAsync<{ store: Store }> = async (fastify, { store }) => {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  const one = { params: MaintenanceWindowIdParams, response: { 200: MaintenanceWindowResponse, ...commonErrors } };

  app.get(
    '/v1/maintenance-windows',
    {
      schema: {
        querystring: MaintenanceWindowListQuery,
        response: { 200: Type.Array(MaintenanceWindowResponse), ...commonErrors },
      },
    },
    async (request) => (await store.maintenanceWindows.list(request.account.id, request.query)).map(windowView),
  );

  app.post(
    '/v1/maintenance-windows',
    { schema: { body: MaintenanceWindowCreateBody, response: { 201: MaintenanceWindowResponse, ...commonErrors } } },
    async (request, reply) =>
      reply
        .status(201)
        .send(windowView(await store.maintenanceWindows.create(request.account.id, windowInput(request.body)))),
  );

  app.get('/v1/maintenance-windows/:id', { schema: one }, async (request) => {
    const found = await store.maintenanceWindows.get(request.account.id, request.params.id);
    if (!found) throw windowNotFound();
    return windowView(found);
  });

  app.put('/v1/maintenance-windows/:id', { schema: { ...one, body: MaintenanceWindowUpdateBody } }, async (request) => {
    const { id } = request.params;
    const stored = await store.maintenanceWindows.get(request.account.id, id);
    if (!stored) throw windowNotFound();
    const updated = await store.maintenanceWindows.update(
      request.account.id,
      id,
      windowInput(mergeUpdate(stored, request.body)),
    );
    if (!updated) throw windowNotFound();
    return windowView(updated);
  });

  app.delete(
    '/v1/maintenance-windows/:id',
    { schema: { params: MaintenanceWindowIdParams, response: { 204: NoContent, ...commonErrors } } },
    async (request, reply) => {
      if (!(await store.maintenanceWindows.delete(request.account.id, request.params.id))) throw windowNotFound();
      return reply.status(204).send(null);
    },
  );
};
