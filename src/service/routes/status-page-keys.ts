/**
 * Reader keys of private status pages (/v1/status-pages/{id}/keys). The raw key is in the answer of
 * the POST that makes it and nowhere else: it is stored hashed, listed masked (docs/api.md).
 */
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyPluginAsync } from 'fastify';
import { Type } from 'typebox';
import { NotFoundError } from '../http/errors.ts';
import type { Store } from '../store/store.ts';
import { commonErrors, NoContent } from './schemas.ts';
import { StatusPageKeySchema, statusPageKeyView } from './status-page-schemas.ts';

const Params = Type.Object({ statusPageId: Type.String({ minLength: 1 }) });
const KeyParams = Type.Object({ statusPageId: Type.String({ minLength: 1 }), keyId: Type.String({ format: 'uuid' }) });
const CreatedKeySchema = Type.Object({ ...StatusPageKeySchema.properties, rawKey: Type.String() });

const pageNotFound = () => new NotFoundError('Status page not found');

export const statusPageKeyRoutes: FastifyPluginAsync<{ store: Store }> = async (fastify, { store }) => {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();

  app.post(
    '/v1/status-pages/:statusPageId/keys',
    { schema: { params: Params, response: { 201: CreatedKeySchema, ...commonErrors } } },
    async (request, reply) => {
      const created = await store.statusPageKeys.create(request.account.id, request.params.statusPageId);
      if (!created) throw pageNotFound();
      return reply.status(201).send({ ...statusPageKeyView(created.record), rawKey: created.key });
    },
  );

  app.get(
    '/v1/status-pages/:statusPageId/keys',
    { schema: { params: Params, response: { 200: Type.Array(StatusPageKeySchema), ...commonErrors } } },
    async (request) => {
      const keys = await store.statusPageKeys.list(request.account.id, request.params.statusPageId);
      if (!keys) throw pageNotFound();
      return keys.map(statusPageKeyView);
    },
  );

  app.delete(
    '/v1/status-pages/:statusPageId/keys/:keyId',
    { schema: { params: KeyParams, response: { 204: NoContent, ...commonErrors } } },
    async (request, reply) => {
      const { statusPageId, keyId } = request.params;
      if (!(await store.statusPageKeys.revoke(request.account.id, statusPageId, keyId))) {
        throw new NotFoundError('Status page key not found');
      }
      return reply.status(204).send(null);
    },
  );
};
