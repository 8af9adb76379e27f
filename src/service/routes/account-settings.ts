/**
 * GET and PUT /v1/account/settings: the account's own settings, today `badgesEnabled` (whether the
 * unauthenticated badge URLs of routes/badges.ts answer for this account's checks and groups). The
 * reference has this in its web app's account settings; here it is part of the API. docs/api.md, "Badges".
 */
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyPluginAsync } from 'fastify';
import { Type } from 'typebox';
import type { Store } from '../store/store.ts';
import { commonErrors } from './schemas.ts';

const AccountSettingsSchema = Type.Object(
  {
    badgesEnabled: Type.Boolean({
      description: 'Serve status badges of this account’s checks and groups without an API key.',
    }),
  },
  { additionalProperties: false },
);

export const accountSettingsRoutes: FastifyPluginAsync<{ store: Store }> = async (fastify, { store }) => {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  const response = { 200: AccountSettingsSchema, ...commonErrors };

  app.get('/v1/account/settings', { schema: { tags: ['Account'], response } }, async (request) =>
    store.accountSettings.get(request.account.id),
  );

  app.put(
    '/v1/account/settings',
    { schema: { tags: ['Account'], body: AccountSettingsSchema, response } },
    async (request) => store.accountSettings.put(request.account.id, request.body),
  );
};
