/**
 * Alert channels (/v1/alert-channels): where a check's alerts go, and which checks and groups
 * subscribe. Secret config fields (keys, tokens, Slack URLs) are stored sealed and returned masked;
 * sending one back masked keeps the stored value. Delivery is not part of this resource.
 */
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyPluginAsync } from 'fastify';
import { type Static, Type } from 'typebox';
import { keepMaskedSecrets, maskChannelSecrets } from '../alert-channels/channel-secrets.ts';
import { toChannelDefinition } from '../alert-channels/validate-config.ts';
import type { ServiceConfig } from '../config.ts';
import { BadRequestError, NotFoundError } from '../http/errors.ts';
import type {
  AlertChannelInput,
  AlertChannelSubscriptionInput,
  StoredAlertChannel,
} from '../store/alert-channel-types.ts';
import type { Store } from '../store/store.ts';
import {
  ChannelBody,
  ChannelIdParams,
  ChannelResponse,
  SubscriptionInput,
  SubscriptionResponse,
} from './alert-channel-schemas.ts';
import { commonErrors, NoContent, PageNumberQuery } from './schemas.ts';

const channelNotFound = () => new NotFoundError('Alert channel not found');

export function alertChannelView(c: StoredAlertChannel): Static<typeof ChannelResponse> {
  const { type, config } = maskChannelSecrets(c.definition);
  const { definition: _d, accountId: _a, createdAt, updatedAt, ...rest } = c;
  return { ...rest, type, config, created_at: createdAt, updated_at: updatedAt };
}

/** One subscription, checked: exactly one of checkId/groupId, naming a check or group of the account. */
async function toSubscription(
  store: Store,
  accountId: string,
  field: string,
  s: Static<typeof SubscriptionInput>,
): Promise<AlertChannelSubscriptionInput> {
  const checkId = s.checkId ?? null;
  const groupId = s.groupId ?? null;
  if ((checkId === null) === (groupId === null))
    throw new BadRequestError(`${field}: give either a checkId or a groupId, not both or neither`);
  if (checkId !== null && !(await store.checks.get(accountId, checkId)))
    throw new BadRequestError(`${field}/checkId: no check ${checkId} in this account`);
  if (groupId !== null && !(await store.checkGroups.get(accountId, groupId)))
    throw new BadRequestError(`${field}/groupId: no check group ${groupId} in this account`);
  return { checkId, groupId, activated: s.activated };
}

async function toInput(
  store: Store,
  config: ServiceConfig,
  accountId: string,
  body: Static<typeof ChannelBody>,
): Promise<AlertChannelInput> {
  const { type, config: raw, subscriptions, ...settings } = body;
  const definition = toChannelDefinition(type, raw, config.alertGateways ?? {});
  const subs =
    subscriptions &&
    (await Promise.all(subscriptions.map((s, i) => toSubscription(store, accountId, `body/subscriptions/${i}`, s))));
  return { ...settings, definition, ...(subs ? { subscriptions: subs } : {}) };
}

export const alertChannelRoutes: FastifyPluginAsync<{ store: Store; config: ServiceConfig }> = async (
  fastify,
  { store, config },
) => {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  const ListQuery = Type.Object({ ...PageNumberQuery() });

  app.get(
    '/v1/alert-channels',
    { schema: { querystring: ListQuery, response: { 200: Type.Array(ChannelResponse), ...commonErrors } } },
    async (request) => {
      return (await store.alertChannels.list(request.account.id, request.query)).map(alertChannelView);
    },
  );

  app.post(
    '/v1/alert-channels',
    { schema: { body: ChannelBody, response: { 201: ChannelResponse, ...commonErrors } } },
    async (request, reply) => {
      const input = await toInput(store, config, request.account.id, request.body);
      return reply.status(201).send(alertChannelView(await store.alertChannels.create(request.account.id, input)));
    },
  );

  app.get(
    '/v1/alert-channels/:id',
    { schema: { params: ChannelIdParams, response: { 200: ChannelResponse, ...commonErrors } } },
    async (request) => {
      const found = await store.alertChannels.get(request.account.id, request.params.id);
      if (!found) throw channelNotFound();
      return alertChannelView(found);
    },
  );

  app.put(
    '/v1/alert-channels/:id',
    { schema: { params: ChannelIdParams, body: ChannelBody, response: { 200: ChannelResponse, ...commonErrors } } },
    async (request) => {
      const accountId = request.account.id;
      const existing = await store.alertChannels.get(accountId, request.params.id);
      if (!existing) throw channelNotFound();
      const input = await toInput(store, config, accountId, request.body);
      const updated = await store.alertChannels.update(accountId, existing.id, {
        ...input,
        definition: keepMaskedSecrets(input.definition, existing.definition),
      });
      if (!updated) throw channelNotFound();
      return alertChannelView(updated);
    },
  );

  app.delete(
    '/v1/alert-channels/:id',
    { schema: { params: ChannelIdParams, response: { 204: NoContent, ...commonErrors } } },
    async (request, reply) => {
      if (!(await store.alertChannels.delete(request.account.id, request.params.id))) throw channelNotFound();
      return reply.status(204).send(null);
    },
  );

  app.put(
    '/v1/alert-channels/:id/subscriptions',
    {
      schema: {
        params: ChannelIdParams,
        body: SubscriptionInput,
        response: { 200: SubscriptionResponse, ...commonErrors },
      },
    },
    async (request) => {
      const accountId = request.account.id;
      if (!(await store.alertChannels.get(accountId, request.params.id))) throw channelNotFound();
      const sub = await toSubscription(store, accountId, 'body', request.body);
      const stored = await store.alertChannels.putSubscription(accountId, request.params.id, sub);
      if (!stored) throw channelNotFound();
      return stored;
    },
  );
};
