/**
 * Checks: POST/PUT of API checks (/v1/checks/api), deleting checks of every type, and the v1 reads
 * (GET /v1/checks and /v1/checks/{id}, in check-reads.ts with v2's). Other types' POST/PUT live in
 * checks-<type>.ts; all of them go through check-writes.ts, which tells the scheduler of each change
 * through hooks.checkChanged.
 */
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyPluginAsync } from 'fastify';
import type { ServiceHooks } from '../app.ts';
import { ApiCheckCreateBody, ApiCheckResponse, ApiCheckUpdateBody } from '../checks/api-check-schema.ts';
import type { ServiceConfig } from '../config.ts';
import type { Store } from '../store/store.ts';
import { registerCheckReads } from './check-reads.ts';
import { checkNotFound, registerCheckWrites } from './check-writes.ts';
import { commonErrors, IdParams, NoContent } from './schemas.ts';

// The views of checks of any type live with the reads (check-reads.ts); the console imports this one from here.
export { anyCheckView } from './check-reads.ts';

export const checkRoutes: FastifyPluginAsync<{
  store: Store;
  hooks: ServiceHooks;
  config: Pick<ServiceConfig, 'publicUrl'>;
}> = async (fastify, { store, hooks, config }) => {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  // GET /v1/checks and /v1/checks/{id}: the same reads, filters and views as /v2.
  registerCheckReads(fastify, store, config.publicUrl, 'v1');

  registerCheckWrites(fastify, store, hooks, {
    path: '/v1/checks/api',
    checkType: 'API',
    createBody: ApiCheckCreateBody,
    updateBody: ApiCheckUpdateBody,
    response: ApiCheckResponse,
  });

  app.delete(
    '/v1/checks/:id',
    { schema: { params: IdParams, response: { 204: NoContent, ...commonErrors } } },
    async (request, reply) => {
      const accountId = request.account.id;
      if (!(await store.checks.delete(accountId, request.params.id))) throw checkNotFound();
      await hooks.checkChanged(accountId, request.params.id, undefined);
      return reply.status(204).send(null);
    },
  );
};
