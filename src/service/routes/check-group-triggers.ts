/**
 * Group triggers. `/v1/triggers/check-groups/{groupId}` (account API) reads, creates and deletes the
 * group's trigger token (the reference's CheckGroupTrigger). The trigger URL itself,
 * `GET|POST /check-groups/{groupId}/trigger/{token}` under PUBLIC_URL, needs no API key: the token
 * is the credential. It runs every check of the group now, at most `concurrency` runs at a time
 * (dispatch/group-trigger.ts).
 */
import type { FastifyPluginAsync } from 'fastify';
import { Type } from 'typebox';
import type { GroupTriggerRunner } from '../dispatch/group-trigger.ts';
import type { Store } from '../store/store.ts';
import { groupNotFound } from './check-groups.ts';
import { IntegerId } from './schemas.ts';
import { registerTriggerTokenApi, registerTriggerUrl } from './trigger-routes.ts';

const TriggeredSchema = Type.Object({
  groupId: Type.Number(),
  concurrency: Type.Number(),
  runs: Type.Array(Type.Object({ checkId: Type.String(), locationId: Type.String() })),
});

/** Account API: manage the token. */
export const checkGroupTriggerRoutes: FastifyPluginAsync<{ store: Store }> = async (app, { store }) => {
  registerTriggerTokenApi(app, {
    key: 'groupId',
    idSchema: IntegerId(),
    prefix: '/v1/triggers/check-groups',
    noTrigger: 'The check group has no trigger; create one with POST',
    requireOwner: async (accountId, groupId: number) => {
      if (!(await store.checkGroups.get(accountId, groupId))) throw groupNotFound();
    },
    get: (accountId, groupId) => store.checkGroups.getTrigger(accountId, groupId),
    ensure: (accountId, groupId) => store.checkGroups.ensureTrigger(accountId, groupId),
    delete: (accountId, groupId) => store.checkGroups.deleteTrigger(accountId, groupId),
  });
};

/** The trigger URL; registered outside the account-authenticated API. */
export const checkGroupTriggerUrlRoutes: FastifyPluginAsync<{ store: Store; triggers: GroupTriggerRunner }> = async (
  app,
  { store, triggers },
) => {
  registerTriggerUrl(app, {
    key: 'groupId',
    idSchema: IntegerId(),
    path: '/check-groups/:groupId/trigger/:token',
    startedSchema: TriggeredSchema,
    notFound: 'No check group trigger with this URL',
    call: (groupId: number, token, now) => store.checkGroups.callTrigger(groupId, token, now),
    trigger: (accountId, groupId) => triggers.trigger(accountId, groupId),
  });
};
