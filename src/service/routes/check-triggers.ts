/**
 * Check triggers. `/v1/triggers/checks/{checkId}` (account API) reads, creates and deletes the
 * check's trigger token (the reference's CheckTrigger). The trigger URL itself,
 * `GET|POST /checks/{checkId}/trigger/{token}` under PUBLIC_URL, needs no API key: the token is the
 * credential. It runs the check now at each of its effective locations (dispatch/check-trigger.ts).
 * The routes are the group triggers' (check-group-triggers.ts), from trigger-routes.ts.
 */
import type { FastifyPluginAsync } from 'fastify';
import { Type } from 'typebox';
import type { CheckTriggerRunner } from '../dispatch/check-trigger.ts';
import { BadRequestError } from '../http/errors.ts';
import type { Store } from '../store/store.ts';
import { checkNotFound } from './check-writes.ts';
import { registerTriggerTokenApi, registerTriggerUrl } from './trigger-routes.ts';

/** Check ids are UUIDs (the reference's `x-format: guid`): anything else is a 400 naming the field. */
const CheckId = () => Type.String({ format: 'uuid' });

const TriggeredSchema = Type.Object({
  checkId: Type.String(),
  runs: Type.Array(Type.Object({ runId: Type.String(), locationId: Type.String() })),
});

/** Account API: manage the token. */
export const checkTriggerRoutes: FastifyPluginAsync<{ store: Store }> = async (app, { store }) => {
  registerTriggerTokenApi(app, {
    key: 'checkId',
    idSchema: CheckId(),
    prefix: '/v1/triggers/checks',
    noTrigger: 'The check has no trigger; create one with POST',
    requireOwner: async (accountId, checkId: string) => {
      const check = await store.checks.get(accountId, checkId);
      if (!check) throw checkNotFound();
      return check;
    },
    assertCanHaveTrigger: (check) => {
      // Agents never run a heartbeat (its job pings it), so its trigger URL could do nothing.
      if (check.checkType === 'HEARTBEAT')
        throw new BadRequestError('params/checkId: a heartbeat check is pinged, not run, and cannot have a trigger');
    },
    get: (accountId, checkId) => store.checkTriggers.get(accountId, checkId),
    ensure: (accountId, checkId) => store.checkTriggers.ensure(accountId, checkId),
    delete: (accountId, checkId) => store.checkTriggers.delete(accountId, checkId),
  });
};

/** The trigger URL; registered outside the account-authenticated API. */
export const checkTriggerUrlRoutes: FastifyPluginAsync<{ store: Store; triggers: CheckTriggerRunner }> = async (
  app,
  { store, triggers },
) => {
  registerTriggerUrl(app, {
    key: 'checkId',
    idSchema: CheckId(),
    path: '/checks/:checkId/trigger/:token',
    startedSchema: TriggeredSchema,
    notFound: 'No check trigger with this URL',
    call: (checkId: string, token, now) => store.checkTriggers.call(checkId, token, now),
    trigger: (accountId, checkId) => triggers.trigger(accountId, checkId),
  });
};
