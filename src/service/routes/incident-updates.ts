/**
 * Incident updates, the timeline of a status page incident (operations 6 to 9 of the spec, and
 * DELETE as the reference has it). An update with notifySubscribers queues deliveries to the
 * subscribers of every status page showing the incident's services (see docs/api.md).
 */
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyPluginAsync } from 'fastify';
import { Type } from 'typebox';
import type { ServiceHooks } from '../app.ts';
import { NotFoundError } from '../http/errors.ts';
import type { IncidentUpdateRecord, Notifying } from '../store/status-pages-types.ts';
import type { Store } from '../store/store.ts';
import { commonErrors, NoContent } from './schemas.ts';
import { IncidentUpdateBody, IncidentUpdateSchema, incidentUpdateView } from './status-page-schemas.ts';
import { toUpdateInput } from './status-page-incidents.ts';

/** The spec's operation 6 lists "at most the 100 latest" updates. */
export const INCIDENT_UPDATES_LIST_LIMIT = 100;

const IncidentParams = Type.Object({ incidentId: Type.String({ minLength: 1 }) });
const UpdateParams = Type.Object({
  incidentId: Type.String({ minLength: 1 }),
  incidentUpdateId: Type.String({ minLength: 1 }),
});

const incidentNotFound = () => new NotFoundError('Incident not found');
const updateNotFound = () => new NotFoundError('Incident update not found');

const BASE = '/v1/status-pages/incidents/:incidentId/incident-updates';

export const incidentUpdateRoutes: FastifyPluginAsync<{ store: Store; hooks: ServiceHooks }> = async (
  fastify,
  { store, hooks },
) => {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();

  /** The answer to a write of an update; deliveries it queued go out now rather than at the next poll. */
  const writtenView = (result: Notifying<IncidentUpdateRecord> | undefined, notFound: () => NotFoundError) => {
    if (!result) throw notFound();
    if (result.queued > 0) hooks.notificationsQueued?.();
    return incidentUpdateView(result.value);
  };

  app.get(
    BASE,
    { schema: { params: IncidentParams, response: { 200: Type.Array(IncidentUpdateSchema), ...commonErrors } } },
    async (request) => {
      const updates = await store.incidents.listUpdates(
        request.account.id,
        request.params.incidentId,
        INCIDENT_UPDATES_LIST_LIMIT,
      );
      if (!updates) throw incidentNotFound();
      return updates.map(incidentUpdateView);
    },
  );

  app.post(
    BASE,
    // The reference answers 200 (not 201) to this create.
    {
      schema: {
        params: IncidentParams,
        body: IncidentUpdateBody,
        response: { 200: IncidentUpdateSchema, ...commonErrors },
      },
    },
    async (request) => {
      const result = await store.incidents.addUpdate(
        request.account.id,
        request.params.incidentId,
        toUpdateInput(request.body, new Date()),
      );
      return writtenView(result, incidentNotFound);
    },
  );

  app.get(
    `${BASE}/:incidentUpdateId`,
    { schema: { params: UpdateParams, response: { 200: IncidentUpdateSchema, ...commonErrors } } },
    async (request) => {
      const { incidentId, incidentUpdateId } = request.params;
      const update = await store.incidents.getUpdate(request.account.id, incidentId, incidentUpdateId);
      if (!update) throw updateNotFound();
      return incidentUpdateView(update);
    },
  );

  app.put(
    `${BASE}/:incidentUpdateId`,
    {
      schema: {
        params: UpdateParams,
        body: IncidentUpdateBody,
        response: { 200: IncidentUpdateSchema, ...commonErrors },
      },
    },
    async (request) => {
      const { incidentId, incidentUpdateId } = request.params;
      const existing = await store.incidents.getUpdate(request.account.id, incidentId, incidentUpdateId);
      if (!existing) throw updateNotFound();
      // An edit that leaves the date out keeps the update where it is in the timeline.
      const input = toUpdateInput(request.body, new Date(existing.publicIncidentUpdateDate));
      const result = await store.incidents.replaceUpdate(request.account.id, incidentId, incidentUpdateId, input);
      return writtenView(result, updateNotFound);
    },
  );

  app.delete(
    `${BASE}/:incidentUpdateId`,
    { schema: { params: UpdateParams, response: { 204: NoContent, ...commonErrors } } },
    async (request, reply) => {
      const { incidentId, incidentUpdateId } = request.params;
      if (!(await store.incidents.deleteUpdate(request.account.id, incidentId, incidentUpdateId)))
        throw updateNotFound();
      return reply.status(204).send(null);
    },
  );
};
