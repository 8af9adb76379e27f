/**
 * Check triggers. `/v1/triggers/checks/{checkId}` (account API) reads, creates and deletes the
 * check's trigger token (the reference's CheckTrigger). The trigger URL itself,
 * `GET|POST /checks/{checkId}/trigger/{token}` under PUBLIC_URL, needs no API key: the token is the
 * credential. It runs the check now at each of its effective locations (dispatch/check-trigger.ts).
 * The same design as the group triggers (check-group-triggers.ts).
 */
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyPluginAsync } from 'fastify';
import { Type } from 'typebox';
import type { CheckTriggerRunner } from '../dispatch/check-trigger.ts';
import { BadRequestError, NotFoundError } from '../http/errors.ts';
import type { CheckTrigger } from '../store/check-trigger-types.ts';
import type { Store } from '../store/store.ts';
import { checkNotFound } from './check-writes.ts';
import { ApiErrorSchema, commonErrors, NoContent } from './schemas.ts';

/** Check ids are UUIDs (the reference's `x-format: guid`): anything else is a 400 naming the field. */
const CheckId = () => Type.String({ format: 'uuid' });
const Params = Type.Object({ checkId: CheckId() });
const UrlParams = Type.Object({ checkId: CheckId(), token: Type.String({ minLength: 1, maxLength: 200 }) });

const TriggerSchema = Type.Object({
  id: Type.Number(),
  token: Type.String(),
  created_at: Type.String(),
  called_at: Type.Union([Type.String(), Type.Null()]),
  updated_at: Type.Union([Type.String(), Type.Null()]),
  checkId: Type.String(),
});

const TriggeredSchema = Type.Object({
  checkId: Type.String(),
  runs: Type.Array(Type.Object({ runId: Type.String(), locationId: Type.String() })),
});

const triggerView = (t: CheckTrigger) => ({
  id: t.id,
  token: t.token,
  created_at: t.createdAt,
  called_at: t.calledAt,
  updated_at: t.updatedAt,
  checkId: t.checkId,
});

const noTrigger = () => new NotFoundError('The check has no trigger; create one with POST');

/** Account API: manage the token. */
export const checkTriggerRoutes: FastifyPluginAsync<{ store: Store }> = async (fastify, { store }) => {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  const requireCheck = async (accountId: string, checkId: string) => {
    const check = await store.checks.get(accountId, checkId);
    if (!check) throw checkNotFound();
    return check;
  };

  app.get(
    '/v1/triggers/checks/:checkId',
    { schema: { params: Params, response: { 200: TriggerSchema, ...commonErrors } } },
    async (request) => {
      await requireCheck(request.account.id, request.params.checkId);
      const trigger = await store.checkTriggers.get(request.account.id, request.params.checkId);
      if (!trigger) throw noTrigger();
      return triggerView(trigger);
    },
  );

  app.post(
    '/v1/triggers/checks/:checkId',
    { schema: { params: Params, response: { 200: TriggerSchema, 201: TriggerSchema, ...commonErrors } } },
    async (request, reply) => {
      const check = await requireCheck(request.account.id, request.params.checkId);
      // Agents never run a heartbeat (its job pings it), so its trigger URL could do nothing.
      if (check.checkType === 'HEARTBEAT')
        throw new BadRequestError('params/checkId: a heartbeat check is pinged, not run, and cannot have a trigger');
      // One token per check: creating it again returns the existing one (200) rather than a second.
      const { trigger, created } = await store.checkTriggers.ensure(request.account.id, request.params.checkId);
      return reply.status(created ? 201 : 200).send(triggerView(trigger));
    },
  );

  app.delete(
    '/v1/triggers/checks/:checkId',
    { schema: { params: Params, response: { 204: NoContent, ...commonErrors } } },
    async (request, reply) => {
      await requireCheck(request.account.id, request.params.checkId);
      if (!(await store.checkTriggers.delete(request.account.id, request.params.checkId))) throw noTrigger();
      return reply.status(204).send(null);
    },
  );
};

/** The trigger URL; registered outside the account-authenticated API. */
export const checkTriggerUrlRoutes: FastifyPluginAsync<{ store: Store; triggers: CheckTriggerRunner }> = async (
  fastify,
  { store, triggers },
) => {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  const handler = async (request: { params: { checkId: string; token: string } }) => {
    const { checkId, token } = request.params;
    // Wrong token and unknown check read the same, so neither can be probed.
    const owner = await store.checkTriggers.call(checkId, token, new Date().toISOString());
    if (!owner) throw new NotFoundError('No check trigger with this URL');
    const started = await triggers.trigger(owner.accountId, checkId);
    if (!started) throw new NotFoundError('No check trigger with this URL');
    return started;
  };
  // `security: []`: the token in the path is the credential, as for pings.
  const schema = {
    params: UrlParams,
    security: [],
    response: { 200: TriggeredSchema, 400: ApiErrorSchema, 404: ApiErrorSchema },
  };
  app.get('/checks/:checkId/trigger/:token', { schema }, handler);
  app.post('/checks/:checkId/trigger/:token', { schema }, handler);
};
