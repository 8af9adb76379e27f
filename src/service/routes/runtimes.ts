/**
 * GET /v1/runtimes and /v1/runtimes/{id}: the runtimes user code runs on, as the folders under
 * runtimes/ describe them (runtime-catalog.json, see src/service/runtime-catalog.ts). The same for
 * every account.
 */
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyPluginAsync } from 'fastify';
import { Type } from 'typebox';
import { NotFoundError } from '../http/errors.ts';
import { readRuntimeCatalog } from '../runtime-catalog.ts';
import { commonErrors, IdParams } from './schemas.ts';

const RuntimeSchema = Type.Object({
  name: Type.String({ description: 'The runtime id, e.g. 2026.04.' }),
  multiStepSupport: Type.Boolean(),
  nodeJsVersion: Type.String(),
  stage: Type.Enum(['CURRENT', 'STABLE']),
  description: Type.String(),
  dependencies: Type.Record(Type.String(), Type.String(), { description: 'Library name to installed version.' }),
});

export const runtimeRoutes: FastifyPluginAsync = async (fastify) => {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  // Read once: the catalog ships with the package and changes only with a new release.
  const runtimes = readRuntimeCatalog();

  app.get(
    '/v1/runtimes',
    { schema: { tags: ['Runtimes'], response: { 200: Type.Array(RuntimeSchema), ...commonErrors } } },
    async () => runtimes,
  );

  app.get(
    '/v1/runtimes/:id',
    { schema: { tags: ['Runtimes'], params: IdParams, response: { 200: RuntimeSchema, ...commonErrors } } },
    async (request) => {
      const runtime = runtimes.find((r) => r.name === request.params.id);
      if (!runtime) throw new NotFoundError(`Runtime ${request.params.id} not found`);
      return runtime;
    },
  );
};
