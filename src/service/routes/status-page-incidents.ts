/**
 * Status page incidents (operations 2 to 5 of the spec, and DELETE as the reference has it).
 * An incident is created with exactly one update; further updates go through incident-updates.ts.
 */
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyPluginAsync, FastifyRequest } from 'fastify';
import { type Static, Type } from 'typebox';
import type { ServiceHooks } from '../app.ts';
import { BadRequestError, NotFoundError } from '../http/errors.ts';
import type { IncidentUpdateInput } from '../store/status-pages-types.ts';
import type { Store } from '../store/store.ts';
import { commonErrors, NoContent } from './schemas.ts';
import {
  IncidentCreateBody,
  IncidentSchema,
  IncidentsPage,
  type IncidentUpdateBody,
  IncidentUpdateOnlyBody,
  incidentView,
  PageQuery,
} from './status-page-schemas.ts';

const Params = Type.Object({ incidentId: Type.String({ minLength: 1 }) });

const notFound = () => new NotFoundError('Incident not found');

/**
 * An update as stored: publicIncidentUpdateDate defaults to the time the request arrived and is
 * normalized to UTC with milliseconds (so updates order correctly); a missing status stays null.
 */
export function toUpdateInput(body: Static<typeof IncidentUpdateBody>, requestTime: Date): IncidentUpdateInput {
  return {
    description: body.description,
    status: body.status ?? null,
    publicIncidentUpdateDate: new Date(body.publicIncidentUpdateDate ?? requestTime).toISOString(),
    notifySubscribers: body.notifySubscribers,
  };
}

/**
 * The spec says incidentUpdates is "not part of the update body". Validation would silently strip
 * an unknown property, so this runs before it and refuses the request instead: a client that sends
 * updates with PUT learns they were not applied.
 */
async function refuseIncidentUpdates(request: FastifyRequest): Promise<void> {
  const body = request.body;
  if (body !== null && typeof body === 'object' && Object.hasOwn(body, 'incidentUpdates')) {
    throw new BadRequestError(
      'body/incidentUpdates is not part of the update body; add updates with POST /v1/status-pages/incidents/{incidentId}/incident-updates',
    );
  }
}

export const statusPageIncidentRoutes: FastifyPluginAsync<{ store: Store; hooks: ServiceHooks }> = async (
  fastify,
  { store, hooks },
) => {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();

  app.get(
    '/v1/status-pages/incidents',
    { schema: { querystring: PageQuery, response: { 200: IncidentsPage, ...commonErrors } } },
    async (request) => {
      const page = await store.incidents.list(request.account.id, request.query);
      return { length: page.entries.length, entries: page.entries.map(incidentView), nextId: page.nextId };
    },
  );

  app.post(
    '/v1/status-pages/incidents',
    { schema: { body: IncidentCreateBody, response: { 201: IncidentSchema, ...commonErrors } } },
    async (request, reply) => {
      const body = request.body;
      const [first] = body.incidentUpdates;
      if (!first) throw new BadRequestError('body/incidentUpdates must have exactly 1 item');
      const { value, queued } = await store.incidents.create(request.account.id, {
        name: body.name,
        severity: body.severity,
        serviceIds: body.services.map((s) => s.id),
        update: toUpdateInput(first, new Date()),
      });
      if (queued > 0) hooks.notificationsQueued?.();
      return reply.status(201).send(incidentView(value));
    },
  );

  app.get(
    '/v1/status-pages/incidents/:incidentId',
    { schema: { params: Params, response: { 200: IncidentSchema, ...commonErrors } } },
    async (request) => {
      const incident = await store.incidents.get(request.account.id, request.params.incidentId);
      if (!incident) throw notFound();
      return incidentView(incident);
    },
  );

  app.put(
    '/v1/status-pages/incidents/:incidentId',
    {
      preValidation: refuseIncidentUpdates,
      schema: { params: Params, body: IncidentUpdateOnlyBody, response: { 200: IncidentSchema, ...commonErrors } },
    },
    async (request) => {
      const { name, severity, services } = request.body;
      const incident = await store.incidents.update(request.account.id, request.params.incidentId, {
        name,
        severity,
        serviceIds: services.map((s) => s.id),
      });
      if (!incident) throw notFound();
      return incidentView(incident);
    },
  );

  app.delete(
    '/v1/status-pages/incidents/:incidentId',
    { schema: { params: Params, response: { 204: NoContent, ...commonErrors } } },
    async (request, reply) => {
      if (!(await store.incidents.delete(request.account.id, request.params.incidentId))) throw notFound();
      return reply.status(204).send(null);
    },
  );
};
