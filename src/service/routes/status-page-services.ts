/**
 * Status page services: the components cards and incidents refer to (/v1/status-pages/services).
 * Listed oldest first; `paginated=false` returns every service in one response.
 */
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyPluginAsync } from 'fastify';
import { Type } from 'typebox';
import { NotFoundError } from '../http/errors.ts';
import type { Store } from '../store/store.ts';
import { commonErrors, NoContent } from './schemas.ts';
import { PageQuery, ServiceSchema, serviceView } from './status-page-schemas.ts';
import { Nullable } from './schemas.ts';

const Params = Type.Object({ serviceId: Type.String({ minLength: 1 }) });
const Body = Type.Object({ name: Type.String({ minLength: 1, maxLength: 255 }) });
const ListQuery = Type.Object({ ...PageQuery.properties, paginated: Type.Boolean({ default: true }) });
const ServicesPage = Type.Object({
  length: Type.Integer(),
  entries: Type.Array(ServiceSchema),
  nextId: Nullable(Type.String()),
});

const notFound = () => new NotFoundError('Status page service not found');

export const statusPageServiceRoutes: FastifyPluginAsync<{ store: Store }> = async (fastify, { store }) => {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();

  app.get(
    '/v1/status-pages/services',
    { schema: { querystring: ListQuery, response: { 200: ServicesPage, ...commonErrors } } },
    async (request) => {
      const { limit, nextId, paginated } = request.query;
      const page = await store.statusPageServices.list(request.account.id, paginated ? { limit, nextId } : {});
      return { length: page.entries.length, entries: page.entries.map(serviceView), nextId: page.nextId };
    },
  );

  app.post(
    '/v1/status-pages/services',
    // The reference answers 200 (not 201) to this create.
    { schema: { body: Body, response: { 200: ServiceSchema, ...commonErrors } } },
    async (request) => serviceView(await store.statusPageServices.create(request.account.id, request.body.name)),
  );

  app.get(
    '/v1/status-pages/services/:serviceId',
    { schema: { params: Params, response: { 200: ServiceSchema, ...commonErrors } } },
    async (request) => {
      const service = await store.statusPageServices.get(request.account.id, request.params.serviceId);
      if (!service) throw notFound();
      return serviceView(service);
    },
  );

  app.put(
    '/v1/status-pages/services/:serviceId',
    { schema: { params: Params, body: Body, response: { 200: ServiceSchema, ...commonErrors } } },
    async (request) => {
      const service = await store.statusPageServices.update(
        request.account.id,
        request.params.serviceId,
        request.body.name,
      );
      if (!service) throw notFound();
      return serviceView(service);
    },
  );

  app.delete(
    '/v1/status-pages/services/:serviceId',
    { schema: { params: Params, response: { 204: NoContent, ...commonErrors } } },
    async (request, reply) => {
      if (!(await store.statusPageServices.delete(request.account.id, request.params.serviceId))) throw notFound();
      return reply.status(204).send(null);
    },
  );
};
