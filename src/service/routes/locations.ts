/**
 * GET /v1/locations: where the account's checks can run. The reference lists its public data-center
 * regions; this service runs checks only in private locations, so it lists the account's own, each as
 * the reference's PublicLocation (`region` is the slug name checks name it by in privateLocations).
 */
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyPluginAsync } from 'fastify';
import { Type } from 'typebox';
import type { Store } from '../store/store.ts';
import { commonErrors } from './schemas.ts';

const LocationSchema = Type.Object({
  region: Type.String({ description: 'The private location’s slug name.' }),
  name: Type.String({ description: 'Its friendly name.' }),
});

export const locationRoutes: FastifyPluginAsync<{ store: Store }> = async (fastify, { store }) => {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();

  app.get(
    '/v1/locations',
    { schema: { tags: ['Location'], response: { 200: Type.Array(LocationSchema), ...commonErrors } } },
    async (request) => {
      const locations = await store.locations.list(request.account.id);
      return locations.map((l) => ({ region: l.slugName, name: l.name }));
    },
  );
};
