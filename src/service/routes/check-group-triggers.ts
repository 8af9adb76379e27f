/**
 * Group triggers. `/v1/triggers/check-groups/{groupId}` (account API) reads, creates and deletes the
 * group's trigger token (the reference's CheckGroupTrigger). The trigger URL itself,
 * `GET|POST /check-groups/{groupId}/trigger/{token}` under PUBLIC_URL, needs no API key: the token
 * is the credential. It runs every check of the group now, at most `concurrency` runs at a time
 * (dispatch/group-trigger.ts).
 */
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyPluginAsync } from 'fastify';
import { Type } from 'typebox';
import type { GroupTriggerRunner } from '../dispatch/group-trigger.ts';
import { NotFoundError } from '../http/errors.ts';
import type { GroupTrigger } from '../store/check-group-types.ts';
import type { Store } from '../store/store.ts';
import { groupNotFound } from './check-groups.ts';
import { ApiErrorSchema, commonErrors, IntegerId, NoContent } from './schemas.ts';

const Params = Type.Object({ groupId: IntegerId() });
const UrlParams = Type.Object({ groupId: IntegerId(), token: Type.String({ minLength: 1, maxLength: 200 }) });

const TriggerSchema = Type.Object({
  id: Type.Number(),
  token: Type.String(),
  created_at: Type.String(),
  called_at: Type.Union([Type.String(), Type.Null()]),
  updated_at: Type.Union([Type.String(), Type.Null()]),
  groupId: Type.Number(),
});

const TriggeredSchema = Type.Object({
  groupId: Type.Number(),
  concurrency: Type.Number(),
  runs: Type.Array(Type.Object({ checkId: Type.String(), locationId: Type.String() })),
});

const triggerView = (t: GroupTrigger) => ({
  id: t.id,
  token: t.token,
  created_at: t.createdAt,
  called_at: t.calledAt,
  updated_at: t.updatedAt,
  groupId: t.groupId,
});

const noTrigger = () => new NotFoundError('The check group has no trigger; create one with POST');

/** Account API: manage the token. */
export const checkGroupTriggerRoutes: FastifyPluginAsync<{ store: Store }> = async (fastify, { store }) => {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  const requireGroup = async (accountId: string, groupId: number) => {
    if (!(await store.checkGroups.get(accountId, groupId))) throw groupNotFound();
  };

  app.get(
    '/v1/triggers/check-groups/:groupId',
    { schema: { params: Params, response: { 200: TriggerSchema, ...commonErrors } } },
    async (request) => {
      await requireGroup(request.account.id, request.params.groupId);
      const trigger = await store.checkGroups.getTrigger(request.account.id, request.params.groupId);
      if (!trigger) throw noTrigger();
      return triggerView(trigger);
    },
  );

  app.post(
    '/v1/triggers/check-groups/:groupId',
    { schema: { params: Params, response: { 200: TriggerSchema, 201: TriggerSchema, ...commonErrors } } },
    async (request, reply) => {
      await requireGroup(request.account.id, request.params.groupId);
      // One token per group: creating it again returns the existing one (200) rather than a second.
      const { trigger, created } = await store.checkGroups.ensureTrigger(request.account.id, request.params.groupId);
      return reply.status(created ? 201 : 200).send(triggerView(trigger));
    },
  );

  app.delete(
    '/v1/triggers/check-groups/:groupId',
    { schema: { params: Params, response: { 204: NoContent, ...commonErrors } } },
    async (request, reply) => {
      await requireGroup(request.account.id, request.params.groupId);
      if (!(await store.checkGroups.deleteTrigger(request.account.id, request.params.groupId))) throw noTrigger();
      return reply.status(204).send(null);
    },
  );
};

/** The trigger URL; registered outside the account-authenticated API. */
export const checkGroupTriggerUrlRoutes: FastifyPluginAsync<{ store: Store; triggers: GroupTriggerRunner }> = async (
  fastify,
  { store, triggers },
) => {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  const handler = async (request: { params: { groupId: number; token: string } }) => {
    const { groupId, token } = request.params;
    // Wrong token and unknown group read the same, so neither can be probed.
    const owner = await store.checkGroups.callTrigger(groupId, token, new Date().toISOString());
    if (!owner) throw new NotFoundError('No check group trigger with this URL');
    const started = await triggers.trigger(owner.accountId, groupId);
    if (!started) throw new NotFoundError('No check group trigger with this URL');
    return started;
  };
  const schema = { params: UrlParams, response: { 200: TriggeredSchema, 400: ApiErrorSchema, 404: ApiErrorSchema } };
  app.get('/check-groups/:groupId/trigger/:token', { schema }, handler);
  app.post('/check-groups/:groupId/trigger/:token', { schema }, handler);
};
