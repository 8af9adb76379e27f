/**
 * Incidents in the dashboard-oriented shape (the reference's /v1/incidents): POST /v1/incidents,
 * GET/PUT/DELETE /v1/incidents/{id}, POST /v1/incidents/{incidentId}/updates and
 * PUT/DELETE /v1/incidents/{incidentId}/updates/{id}. An incident belongs to one of the account's
 * dashboards (its numeric id) and always has at least one update.
 */
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance, FastifyPluginAsync } from 'fastify';
import { type Static, Type } from 'typebox';
import { BadRequestError, NotFoundError } from '../http/errors.ts';
import {
  DASHBOARD_INCIDENT_IMPACTS,
  DASHBOARD_INCIDENT_UPDATE_STATUSES,
  type DashboardIncident,
  type DashboardIncidentFields,
  type DashboardIncidentUpdate,
} from '../store/heartbeat-dashboard-types.ts';
import type { Store } from '../store/store.ts';
import { commonErrors, IntegerId, NoContent, Nullable } from './schemas.ts';

const Impact = Type.Enum([...DASHBOARD_INCIDENT_IMPACTS]);
const Status = Type.Enum([...DASHBOARD_INCIDENT_UPDATE_STATUSES]);
const DateTime = Type.String({ format: 'date-time' });

const NewUpdate = Type.Object(
  { status: Status, description: Type.String({ minLength: 1 }) },
  { additionalProperties: false },
);

const CreateBody = Type.Object(
  {
    name: Type.String({ minLength: 1, maxLength: 255 }),
    impact: Type.Enum([...DASHBOARD_INCIDENT_IMPACTS], { default: 'MINOR' }),
    dashboardId: IntegerId(),
    // The reference: exactly one update on create; later ones go through .../updates.
    incidentUpdates: Type.Array(NewUpdate, { minItems: 1, maxItems: 1 }),
    startedAt: Type.Optional(Nullable(DateTime)),
    stoppedAt: Type.Optional(Nullable(DateTime)),
  },
  { additionalProperties: false },
);

const UpdateBody = Type.Object(
  {
    name: Type.String({ minLength: 1, maxLength: 255 }),
    impact: Type.Enum([...DASHBOARD_INCIDENT_IMPACTS], { default: 'MINOR' }),
    startedAt: Type.Optional(Nullable(DateTime)),
    stoppedAt: Type.Optional(Nullable(DateTime)),
  },
  { additionalProperties: false },
);

const UpdateView = Type.Object({
  id: Type.String(),
  incidentId: Type.String(),
  status: Status,
  description: Type.String(),
  created_at: DateTime,
  updated_at: Nullable(DateTime),
});

const incidentProperties = {
  id: Type.String(),
  name: Type.String(),
  impact: Impact,
  dashboardId: Type.Number(),
  startedAt: Nullable(DateTime),
  stoppedAt: Nullable(DateTime),
  created_at: DateTime,
  updated_at: Nullable(DateTime),
};
/** GET and POST (the reference's Model47): with its updates, newest first. */
const IncidentWithUpdates = Type.Object({
  ...incidentProperties,
  incidentUpdates: Type.Array(UpdateView, { minItems: 1 }),
});
/** PUT (the reference's Model49): the incident without its updates. */
const IncidentOnly = Type.Object(incidentProperties);

const IdParams = Type.Object({ id: Type.String({ minLength: 1 }) });
const UpdateParams = Type.Object({ incidentId: Type.String({ minLength: 1 }), id: Type.String({ minLength: 1 }) });
const IncidentParams = Type.Object({ incidentId: Type.String({ minLength: 1 }) });
const GetQuery = Type.Object({ includeAllIncidentUpdates: Type.Boolean({ default: false }) });
/** The reference lists `probe` on PUT without saying what it does; accepted and ignored. */
const PutQuery = Type.Object({ probe: Type.Optional(Type.Boolean()) });

const notFound = () => new NotFoundError('Incident not found');
const updateNotFound = () => new NotFoundError('Incident update not found');

const updateView = (u: DashboardIncidentUpdate): Static<typeof UpdateView> => ({
  id: u.id,
  incidentId: u.incidentId,
  status: u.status,
  description: u.description,
  created_at: u.createdAt,
  updated_at: u.updatedAt,
});

const incidentView = (i: DashboardIncident) => ({
  id: i.id,
  name: i.name,
  impact: i.impact,
  dashboardId: i.dashboardId,
  startedAt: i.startedAt,
  stoppedAt: i.stoppedAt,
  created_at: i.createdAt,
  updated_at: i.updatedAt,
});

/** The active period: startedAt defaults to the time of the request, stoppedAt to none (ongoing). */
function fields(body: Static<typeof UpdateBody>, nowIso: string): DashboardIncidentFields {
  const startedAt = body.startedAt === undefined ? nowIso : body.startedAt;
  const stoppedAt = body.stoppedAt ?? null;
  if (startedAt && stoppedAt && Date.parse(stoppedAt) < Date.parse(startedAt)) {
    throw new BadRequestError('body/stoppedAt must not be before body/startedAt');
  }
  return { name: body.name, impact: body.impact, startedAt, stoppedAt };
}

export const dashboardIncidentRoutes: FastifyPluginAsync<{ store: Store }> = async (app, { store }) => {
  registerIncidentRoutes(app, store);
  registerIncidentUpdateRoutes(app, store);
};

/** POST /v1/incidents, GET/PUT/DELETE /v1/incidents/{id}. */
function registerIncidentRoutes(fastify: FastifyInstance, store: Store) {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  const incidents = store.dashboardIncidents;

  app.post(
    '/v1/incidents',
    { schema: { body: CreateBody, response: { 200: IncidentWithUpdates, ...commonErrors } } },
    async (request) => {
      const accountId = request.account.id;
      const body = request.body;
      if (!(await store.dashboards.get(accountId, body.dashboardId))) {
        throw new BadRequestError(`body/dashboardId: no dashboard with id ${body.dashboardId} in this account`);
      }
      const [first] = body.incidentUpdates as [Static<typeof NewUpdate>];
      const created = await incidents.create(
        accountId,
        body.dashboardId,
        fields(body, new Date().toISOString()),
        first,
      );
      // 200, not 201: the reference's only success response for this operation.
      return { ...incidentView(created.incident), incidentUpdates: created.updates.map(updateView) };
    },
  );

  app.get(
    '/v1/incidents/:id',
    { schema: { params: IdParams, querystring: GetQuery, response: { 200: IncidentWithUpdates, ...commonErrors } } },
    async (request) => {
      const accountId = request.account.id;
      const incident = await incidents.get(accountId, request.params.id);
      if (!incident) throw notFound();
      // Without includeAllIncidentUpdates only the latest update, as the reference documents.
      const updates = await incidents.listUpdates(
        accountId,
        incident.id,
        request.query.includeAllIncidentUpdates ? undefined : 1,
      );
      return { ...incidentView(incident), incidentUpdates: updates.map(updateView) };
    },
  );

  app.put(
    '/v1/incidents/:id',
    {
      schema: {
        params: IdParams,
        querystring: PutQuery,
        body: UpdateBody,
        response: { 200: IncidentOnly, ...commonErrors },
      },
    },
    async (request) => {
      const accountId = request.account.id;
      const existing = await incidents.get(accountId, request.params.id);
      if (!existing) throw notFound();
      // An omitted startedAt keeps the stored one (the request-time default is for create only).
      const body = {
        ...request.body,
        startedAt: request.body.startedAt === undefined ? existing.startedAt : request.body.startedAt,
      };
      const updated = await incidents.update(accountId, existing.id, fields(body, new Date().toISOString()));
      if (!updated) throw notFound();
      return incidentView(updated);
    },
  );

  app.delete(
    '/v1/incidents/:id',
    { schema: { params: IdParams, response: { 204: NoContent, ...commonErrors } } },
    async (request, reply) => {
      if (!(await incidents.delete(request.account.id, request.params.id))) throw notFound();
      return reply.status(204).send(null);
    },
  );
}

/** POST /v1/incidents/{incidentId}/updates, PUT/DELETE /v1/incidents/{incidentId}/updates/{id}. */
function registerIncidentUpdateRoutes(fastify: FastifyInstance, store: Store) {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  const incidents = store.dashboardIncidents;

  app.post(
    '/v1/incidents/:incidentId/updates',
    { schema: { params: IncidentParams, body: NewUpdate, response: { 201: UpdateView, ...commonErrors } } },
    async (request, reply) => {
      const update = await incidents.addUpdate(request.account.id, request.params.incidentId, request.body);
      if (!update) throw notFound();
      return reply.status(201).send(updateView(update));
    },
  );

  app.put(
    '/v1/incidents/:incidentId/updates/:id',
    {
      schema: {
        params: UpdateParams,
        body: Type.Object({ description: Type.String({ minLength: 1 }) }, { additionalProperties: false }),
        response: { 200: UpdateView, ...commonErrors },
      },
    },
    async (request) => {
      const accountId = request.account.id;
      const { incidentId, id } = request.params;
      if (!(await incidents.get(accountId, incidentId))) throw notFound();
      const update = await incidents.editUpdate(accountId, incidentId, id, request.body.description);
      if (!update) throw updateNotFound();
      return updateView(update);
    },
  );

  app.delete(
    '/v1/incidents/:incidentId/updates/:id',
    { schema: { params: UpdateParams, response: { 204: NoContent, ...commonErrors } } },
    async (request, reply) => {
      const accountId = request.account.id;
      const { incidentId, id } = request.params;
      if (!(await incidents.get(accountId, incidentId))) throw notFound();
      const result = await incidents.deleteUpdate(accountId, incidentId, id);
      if (result === 'not-found') throw updateNotFound();
      if (result === 'last-update') {
        throw new BadRequestError(
          'An incident keeps at least one update: add another before deleting this one, or delete the incident',
        );
      }
      return reply.status(204).send(null);
    },
  );
}
