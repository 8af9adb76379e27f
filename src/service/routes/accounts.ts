/**
 * GET /next/accounts and /next/accounts/{accountId}: the caller's own account, as the reference's
 * CLI reads it to check its credentials before every command (`checkly whoami` shows it). Only the
 * account the API key belongs to is visible: any other id is a 404, whether it exists or not.
 */
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyPluginAsync } from 'fastify';
import { Type } from 'typebox';
import { DEFAULT_RUNTIME_ID } from '../../shared/checks/types.ts';
import { NotFoundError } from '../http/errors.ts';
import type { Account } from '../store/store.ts';
import { commonErrors } from './schemas.ts';

const AccountSchema = Type.Object({
  id: Type.String(),
  name: Type.String(),
  runtimeId: Type.String({ description: 'The runtime checks without one of their own (or of their group) run on.' }),
});

const accountView = (account: Account) => ({ id: account.id, name: account.name, runtimeId: DEFAULT_RUNTIME_ID });

export const accountRoutes: FastifyPluginAsync = async (fastify) => {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();

  app.get(
    '/next/accounts',
    { schema: { tags: ['Account'], response: { 200: Type.Array(AccountSchema), ...commonErrors } } },
    async (request) => [accountView(request.account)],
  );

  app.get(
    '/next/accounts/:accountId',
    {
      schema: {
        tags: ['Account'],
        params: Type.Object({ accountId: Type.String({ minLength: 1 }) }),
        response: { 200: AccountSchema, ...commonErrors },
      },
    },
    async (request) => {
      if (request.params.accountId !== request.account.id) throw new NotFoundError('Account not found');
      return accountView(request.account);
    },
  );
};
