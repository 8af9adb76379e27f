/**
 * Subscriptions of a status page (/v1/status-pages/{statusPageId}/subscriptions). The reference has
 * EMAIL only; WEBHOOK is our addition, with `config` a JSON string {"url", "secret"}: the URL gets
 * each notification as a signed POST (see docs/api.md "Subscriber notifications"). A subscription
 * made without autoVerify is PENDING and is sent a confirmation (double opt-in).
 */
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyPluginAsync } from 'fastify';
import { Type } from 'typebox';
import type { ServiceHooks } from '../app.ts';
import type { ServiceConfig } from '../config.ts';
import { BadRequestError, NotFoundError } from '../http/errors.ts';
import { parseEmailAddress, parseWebhookUrl } from '../subscriptions/addresses.ts';
import { confirmationPolicy, loadSubscriptionConfig } from '../subscriptions/config.ts';
import {
  SUBSCRIPTION_STATUSES,
  SUBSCRIPTION_TYPES,
  type SubscriptionInput,
  type SubscriptionRecord,
} from '../store/status-pages-types.ts';
import type { Store } from '../store/store.ts';
import { commonErrors, NoContent } from './schemas.ts';

/** A webhook secret shorter than this is too easy to guess to make a signature mean anything. */
export const WEBHOOK_SECRET_MIN_LENGTH = 16;

const PageParams = Type.Object({ statusPageId: Type.String({ minLength: 1 }) });
const SubscriptionParams = Type.Object({
  statusPageId: Type.String({ minLength: 1 }),
  subscriptionId: Type.String({ minLength: 1 }),
});

const SubscriptionSchema = Type.Object({
  id: Type.String(),
  type: Type.Enum([...SUBSCRIPTION_TYPES]),
  address: Type.String(),
  status: Type.Enum([...SUBSCRIPTION_STATUSES]),
  created_at: Type.String({ format: 'date-time' }),
  updated_at: Type.String({ format: 'date-time' }),
});

/** BulkCreateSubscriptionsPayload. */
const BulkBody = Type.Object({
  subscriptions: Type.Array(
    Type.Object({ type: Type.Enum([...SUBSCRIPTION_TYPES]), config: Type.String({ minLength: 1, maxLength: 2048 }) }),
    { minItems: 1, maxItems: 100 },
  ),
  autoVerify: Type.Boolean({ default: false }),
});

const BulkResponse = Type.Object({
  created: Type.Number(),
  skipped: Type.Number(),
  status: Type.Enum([...SUBSCRIPTION_STATUSES]),
});

function subscriptionView(s: SubscriptionRecord) {
  return {
    id: s.id,
    type: s.type,
    address: s.address,
    status: s.status,
    created_at: s.createdAt,
    updated_at: s.updatedAt,
  };
}

/** Reads one `config` into a recipient; the error names the item and what is expected. */
export function parseSubscriptionConfig(
  type: SubscriptionInput['type'],
  config: string,
  index: number,
): SubscriptionInput {
  const field = `body/subscriptions/${index}/config`;
  if (type === 'EMAIL') {
    const address = parseEmailAddress(config);
    if (!address) throw new BadRequestError(`${field} must be an email address for type EMAIL`);
    return { type, address, secret: null };
  }
  const expected = `${field} must be a JSON string {"url": "http(s)://...", "secret": "<at least ${WEBHOOK_SECRET_MIN_LENGTH} characters>"} for type WEBHOOK`;
  let parsed: unknown;
  try {
    parsed = JSON.parse(config);
  } catch {
    throw new BadRequestError(expected);
  }
  const { url, secret } = (parsed ?? {}) as { url?: unknown; secret?: unknown };
  if (typeof url !== 'string' || typeof secret !== 'string' || secret.length < WEBHOOK_SECRET_MIN_LENGTH) {
    throw new BadRequestError(expected);
  }
  const parsedUrl = parseWebhookUrl(url);
  if (!parsedUrl) throw new BadRequestError(expected);
  return { type, address: parsedUrl.href, secret };
}

export const statusPageSubscriptionRoutes: FastifyPluginAsync<{
  store: Store;
  config: ServiceConfig;
  hooks: ServiceHooks;
}> = async (fastify, { store, config, hooks }) => {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  const confirmation = config.subscriptions ?? loadSubscriptionConfig({});

  app.get(
    '/v1/status-pages/:statusPageId/subscriptions',
    { schema: { params: PageParams, response: { 200: Type.Array(SubscriptionSchema), ...commonErrors } } },
    async (request) => {
      const subscriptions = await store.subscriptions.list(request.account.id, request.params.statusPageId);
      if (!subscriptions) throw new NotFoundError('Status page not found');
      return subscriptions.map(subscriptionView);
    },
  );

  app.post(
    '/v1/status-pages/:statusPageId/subscriptions/bulk',
    { schema: { params: PageParams, body: BulkBody, response: { 201: BulkResponse, ...commonErrors } } },
    async (request, reply) => {
      const items = request.body.subscriptions.map((s, i) => parseSubscriptionConfig(s.type, s.config, i));
      // Without autoVerify a subscription is sent a confirmation and is not notified until confirmed (docs/api.md).
      const status = request.body.autoVerify ? 'VERIFIED' : 'PENDING';
      const policy = confirmationPolicy(confirmation);
      const result = await store.subscriptions.bulkCreate(
        request.account.id,
        request.params.statusPageId,
        items,
        status,
        policy,
      );
      if (!result) throw new NotFoundError('Status page not found');
      if (result.confirmationsQueued > 0) hooks.notificationsQueued?.();
      return reply.status(201).send({ created: result.created, skipped: result.skipped, status });
    },
  );

  app.delete(
    '/v1/status-pages/:statusPageId/subscriptions/:subscriptionId',
    { schema: { params: SubscriptionParams, response: { 204: NoContent, ...commonErrors } } },
    async (request, reply) => {
      const { statusPageId, subscriptionId } = request.params;
      if (!(await store.subscriptions.delete(request.account.id, statusPageId, subscriptionId))) {
        throw new NotFoundError('Subscription not found');
      }
      return reply.status(204).send(null);
    },
  );
};
