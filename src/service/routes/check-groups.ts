/**
 * Check groups: create and update in the V2 shape (POST /v2/check-groups, PUT /v2/check-groups/{id}),
 * list, read and delete on /v1, and the member checks with the group's settings applied. A change of
 * a group can change where and whether its checks run, so every member is handed to the scheduler
 * (hooks.checkChanged) after it. docs/api.md "Check groups" has the rules.
 */
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance, FastifyPluginAsync } from 'fastify';
import { type Static, Type } from 'typebox';
import type { ServiceHooks } from '../app.ts';
import {
  AutoAssignQuery,
  subscriptionsOfGroup,
  takeSubscriptions,
} from '../alert-channels/subscriber-subscriptions.ts';
import { CheckGroupCreateBody, CheckGroupResponse, CheckGroupUpdateBody } from '../checks/check-group-schema.ts';
import { DEFAULT_ALERT_SETTINGS } from '../checks/alert-settings-schema.ts';
import { assertAssertionsUsable } from '../checks/assertion-rules.ts';
import { resolveVariableList } from '../checks/environment-variables-schema.ts';
import { effectivePlacement, mergeApiRequest } from '../checks/group-merge.ts';
import { DOUBLE_CHECK_STRATEGY, effectiveRetryStrategy } from '../checks/retry-policy.ts';
import { BadRequestError, ConflictError, NotFoundError } from '../http/errors.ts';
import { maskSecretValues } from '../secrets/variables.ts';
import type { ChannelRef } from '../store/alert-channel-types.ts';
import type { CheckGroupBody, CheckGroupInput, StoredCheckGroup } from '../store/check-group-types.ts';
import type { StoredCheck, Store } from '../store/store.ts';
import { assertOptionalHttpUrl } from './http-url.ts';
import { ApiErrorSchema, commonErrors, IntegerId, NoContent, PageNumberQuery } from './schemas.ts';
import { assertOwnSnippets } from './snippets.ts';

type CreateBody = Omit<Static<typeof CheckGroupCreateBody>, 'alertChannelSubscriptions'>;
type UpdateBody = Omit<Static<typeof CheckGroupUpdateBody>, 'alertChannelSubscriptions'>;

export const GroupIdParams = Type.Object({ id: IntegerId() });

const ListQuery = Type.Object({
  ...PageNumberQuery(),
  tag: Type.Optional(Type.Array(Type.String())),
  name: Type.Optional(Type.Array(Type.String())),
});

const ChecksQuery = Type.Object(PageNumberQuery());

/** CheckGroupCheck(V2): a check in the GET /v1/checks shape, with the group's settings applied. */
const GroupCheck = Type.Object({ id: Type.String(), checkType: Type.String() }, { additionalProperties: true });

export const groupNotFound = () => new NotFoundError('Check group not found');

/** GET's shape: the stored body, its subscriptions (kept in their own table), id and timestamps. */
export function groupView(group: StoredCheckGroup, subscriptions: ChannelRef[]): Static<typeof CheckGroupResponse> {
  const b = group.body;
  return {
    id: group.id,
    ...b,
    alertChannelSubscriptions: subscriptions,
    // Secret values are never returned (null, as for checks: secrets/variables.ts).
    environmentVariables: maskSecretValues(b).environmentVariables,
    alertSettings: b.alertSettings ?? { ...DEFAULT_ALERT_SETTINGS },
    created_at: group.createdAt,
    updated_at: group.updatedAt,
  } as Static<typeof CheckGroupResponse>;
}

/** What PUT's merge and POST share: rules beyond the schema, slugs to ids, the doubleCheck mapping. */
async function resolveGroup(
  store: Store,
  accountId: string,
  body: Omit<CreateBody, 'retryStrategy'> & { retryStrategy: CheckGroupBody['retryStrategy'] },
  /** PUT: the stored variables, whose secret values a null value keeps. */
  storedVariables: CheckGroupBody['environmentVariables'] = [],
): Promise<CheckGroupInput> {
  const slugs = [...new Set(body.privateLocations ?? [])];
  const locationIds: string[] = [];
  for (const slug of slugs) {
    const location = await store.locations.getBySlug(accountId, slug);
    if (!location)
      throw new BadRequestError(`body/privateLocations: no private location with slugName "${slug}" in this account`);
    locationIds.push(location.id);
  }
  // A snippet of another account (or none) is a 400 naming the field, as for a check's.
  await assertOwnSnippets(store, accountId, body);
  assertOptionalHttpUrl('body/apiCheckDefaults/url', body.apiCheckDefaults?.url, { placeholders: true });
  assertAssertionsUsable('body/apiCheckDefaults/assertions', body.apiCheckDefaults?.assertions);
  const variables = resolveVariableList('body/environmentVariables', body.environmentVariables, storedVariables);
  const stored: CheckGroupBody = {
    ...(body as unknown as CheckGroupBody),
    privateLocations: slugs,
    environmentVariables: variables,
    apiCheckDefaults: body.apiCheckDefaults as CheckGroupBody['apiCheckDefaults'],
    alertSettings: (body.alertSettings ?? null) as CheckGroupBody['alertSettings'],
  };
  return {
    name: body.name,
    activated: body.activated,
    muted: body.muted,
    concurrency: body.concurrency,
    locationIds,
    body: stored,
  };
}

/**
 * The deprecated doubleCheck: true, with no retryStrategy in the same body, becomes the equivalent
 * strategy (retry-policy.ts DOUBLE_CHECK_STRATEGY); an explicit retryStrategy always wins.
 */
function retryStrategyOf(
  given: CreateBody['retryStrategy'],
  doubleCheck: boolean,
  previous: CheckGroupBody['retryStrategy'],
) {
  if (given !== undefined) return given as CheckGroupBody['retryStrategy'];
  if (doubleCheck) return { ...DOUBLE_CHECK_STRATEGY };
  // doubleCheck turned off: drop the strategy it had mapped to, keep any other.
  return JSON.stringify(previous) === JSON.stringify(DOUBLE_CHECK_STRATEGY) ? 'FALLBACK' : previous;
}

function mergeUpdate(existing: CheckGroupBody, patch: UpdateBody): CheckGroupBody & CreateBody {
  return { ...existing, ...patch } as CheckGroupBody & CreateBody;
}

/** A member check as the group runs it: location, activation, runtime, retries and API defaults applied. */
function memberView(
  check: StoredCheck,
  group: StoredCheckGroup,
  slugs: Map<string, string>,
  subscriptions: ChannelRef[],
): Record<string, unknown> {
  const body = check.body;
  const placement = effectivePlacement(check, group);
  const view: Record<string, unknown> = {
    id: check.id,
    // The check's secret variable values are never returned (secrets/variables.ts).
    ...maskSecretValues(body),
    // The check's own; the group's subscriptions are on the group (both alert: docs/alerting.md).
    alertChannelSubscriptions: subscriptions,
    activated: placement.activated,
    muted: placement.muted,
    privateLocations: placement.locationIds.map((id) => slugs.get(id) ?? id),
    locations: group.body.locations.length > 0 ? group.body.locations : (body.locations ?? []),
    runtimeId: body.runtimeId ?? group.body.runtimeId ?? null,
    retryStrategy: effectiveRetryStrategy(body, group.body as unknown as Record<string, unknown>),
    created_at: check.createdAt,
    updated_at: check.updatedAt,
  };
  if (check.checkType === 'API' && typeof body.request === 'object' && body.request !== null) {
    view.request = mergeApiRequest(body.request as Parameters<typeof mergeApiRequest>[0], group.body.apiCheckDefaults);
  }
  return view;
}

async function loadGroup(store: Store, accountId: string, id: number) {
  const group = await store.checkGroups.get(accountId, id);
  if (!group) throw groupNotFound();
  return group;
}

const viewOf = async (store: Store, group: StoredCheckGroup) =>
  groupView(group, await subscriptionsOfGroup(store, group.accountId, group.id));

/** POST /v2/check-groups and PUT /v2/check-groups/{id}. */
function registerGroupWrites(fastify: FastifyInstance, store: Store, hooks: ServiceHooks) {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();

  /** The scheduler re-reads each member: the group may have changed where or whether it runs. */
  const membersChanged = async (accountId: string, groupId: number) => {
    for (const checkId of await store.checkGroups.memberIds(accountId, groupId)) {
      await hooks.checkChanged(accountId, checkId, await store.checks.get(accountId, checkId));
    }
  };

  app.post(
    '/v2/check-groups',
    {
      schema: {
        querystring: AutoAssignQuery,
        body: CheckGroupCreateBody,
        response: { 201: CheckGroupResponse, ...commonErrors },
      },
    },
    async (request, reply) => {
      const accountId = request.account.id;
      const subs = await takeSubscriptions(store, accountId, request.body);
      const { rest } = subs;
      const body = { ...rest, retryStrategy: retryStrategyOf(rest.retryStrategy, rest.doubleCheck, 'FALLBACK') };
      const group = await store.checkGroups.create(accountId, await resolveGroup(store, accountId, body));
      await subs.created({ groupId: group.id }, request.query.autoAssignAlerts);
      return reply.status(201).send(await viewOf(store, group));
    },
  );

  app.put(
    '/v2/check-groups/:id',
    {
      schema: {
        params: GroupIdParams,
        querystring: AutoAssignQuery,
        body: CheckGroupUpdateBody,
        response: { 200: CheckGroupResponse, ...commonErrors },
      },
    },
    async (request) => {
      const accountId = request.account.id;
      const existing = await loadGroup(store, accountId, request.params.id);
      const subs = await takeSubscriptions(store, accountId, request.body);
      const patch = subs.rest;
      const merged = mergeUpdate(existing.body, patch);
      const retryStrategy =
        patch.retryStrategy !== undefined || patch.doubleCheck !== undefined
          ? retryStrategyOf(patch.retryStrategy, merged.doubleCheck, existing.body.retryStrategy)
          : existing.body.retryStrategy;
      const updated = await store.checkGroups.update(
        accountId,
        existing.id,
        await resolveGroup(store, accountId, { ...merged, retryStrategy }, existing.body.environmentVariables),
      );
      if (!updated) throw groupNotFound();
      await subs.updated({ groupId: updated.id });
      await membersChanged(accountId, updated.id);
      return viewOf(store, updated);
    },
  );
}

/** GET /v1/check-groups, GET and DELETE /v1/check-groups/{id}. */
function registerGroupReadsAndDelete(fastify: FastifyInstance, store: Store) {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();

  app.get(
    '/v1/check-groups',
    { schema: { querystring: ListQuery, response: { 200: Type.Array(CheckGroupResponse), ...commonErrors } } },
    async (request) => {
      const accountId = request.account.id;
      const { limit, page, tag, name } = request.query;
      const groups = await store.checkGroups.list(accountId, {
        limit,
        page,
        ...(tag ? { tags: tag } : {}),
        ...(name ? { names: name } : {}),
      });
      // Their subscriptions are read in one query.
      const subs = await store.alertChannels.groupSubscriptions(
        accountId,
        groups.map((g) => g.id),
      );
      return groups.map((g) => groupView(g, subs.get(g.id) ?? []));
    },
  );

  app.get(
    '/v1/check-groups/:id',
    { schema: { params: GroupIdParams, response: { 200: CheckGroupResponse, ...commonErrors } } },
    async (request) => viewOf(store, await loadGroup(store, request.account.id, request.params.id)),
  );

  app.delete(
    '/v1/check-groups/:id',
    { schema: { params: GroupIdParams, response: { 204: NoContent, 409: ApiErrorSchema, ...commonErrors } } },
    async (request, reply) => {
      const outcome = await store.checkGroups.delete(request.account.id, request.params.id);
      if (outcome === 'not_found') throw groupNotFound();
      if (outcome === 'has_checks') {
        // As the reference: a group that still contains checks cannot be deleted.
        throw new ConflictError(
          'The check group still contains checks; move or delete them (set their groupId to null) first',
        );
      }
      return reply.status(204).send(null);
    },
  );
}

/** GET /v1|v2/check-groups/{id}/checks: the members as the group runs them. */
function registerMemberReads(fastify: FastifyInstance, store: Store) {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  for (const version of ['v1', 'v2']) {
    app.get(
      `/${version}/check-groups/:id/checks`,
      {
        schema: {
          params: GroupIdParams,
          querystring: ChecksQuery,
          response: { 200: Type.Array(GroupCheck), ...commonErrors },
        },
      },
      async (request) => {
        const accountId = request.account.id;
        const group = await loadGroup(store, accountId, request.params.id);
        const { limit, page } = request.query;
        const ids = (await store.checkGroups.memberIds(accountId, group.id)).slice((page - 1) * limit, page * limit);
        const slugs = new Map((await store.locations.list(accountId)).map((l) => [l.id, l.slugName]));
        const subs = await store.alertChannels.checkSubscriptions(accountId, ids);
        const views: Record<string, unknown>[] = [];
        for (const id of ids) {
          const check = await store.checks.get(accountId, id);
          if (check) views.push(memberView(check, group, slugs, subs.get(id) ?? []));
        }
        return views as Array<Static<typeof GroupCheck>>;
      },
    );
  }
}

export const checkGroupRoutes: FastifyPluginAsync<{ store: Store; hooks: ServiceHooks }> = async (
  app,
  { store, hooks },
) => {
  registerGroupWrites(app, store, hooks);
  registerGroupReadsAndDelete(app, store);
  registerMemberReads(app, store);
};
