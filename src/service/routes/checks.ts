/**
 * Checks. Only API checks can be created today (POST /v1/checks/api); listing, reading and
 * deleting work for every type. After each change the scheduler is told through hooks.checkChanged.
 */
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyPluginAsync } from 'fastify';
import { type Static, Type } from 'typebox';
import { CHECK_TYPES, type CheckType } from '../../shared/checks/types.ts';
import type { ServiceHooks } from '../app.ts';
import { ApiCheckCreateBody, ApiCheckResponse, ApiCheckUpdateBody, SUB_MINUTE_OFFSETS } from '../checks/api-check-schema.ts';
import { BadRequestError, NotFoundError } from '../http/errors.ts';
import type { StoredCheck, Store } from '../store/store.ts';
import { commonErrors, IdParams, NoContent } from './schemas.ts';

type ApiCheckBody = Static<typeof ApiCheckCreateBody>;

/** The reference's checkType filter values; types this service lacks simply match nothing. */
const CHECK_TYPE_FILTER = [
  'AGENTIC', 'API', 'BROWSER', 'HEARTBEAT', 'ICMP', 'MULTI_STEP', 'TCP', 'PLAYWRIGHT', 'TRACEROUTE', 'URL', 'DNS', 'SSL', 'GRPC',
] as const;

const ListQuery = Type.Object({
  limit: Type.Integer({ minimum: 1, maximum: 100, default: 10 }),
  page: Type.Integer({ minimum: 1, default: 1 }),
  checkType: Type.Optional(Type.Enum([...CHECK_TYPE_FILTER])),
});

const isCheckType = (value: string): value is CheckType => (CHECK_TYPES as readonly string[]).includes(value);

const notFound = () => new NotFoundError('Check not found');

/** GET's shape: the stored body with id and timestamps (created_at/updated_at as the reference). */
export function checkView(check: StoredCheck): Static<typeof ApiCheckResponse> {
  // The body was validated against the create schema (defaults filled) before it was stored.
  const body = check.body as ApiCheckBody;
  return { id: check.id, ...body, created_at: check.createdAt, updated_at: check.updatedAt };
}

/**
 * Rules JSON Schema cannot express, and the mapping of privateLocations slugs to location ids.
 * Returns the StoredCheck fields for the repository.
 */
async function resolveApiCheck(store: Store, accountId: string, body: ApiCheckBody) {
  if (body.frequency === 0 && !SUB_MINUTE_OFFSETS.includes(body.frequencyOffset as 10 | 20 | 30)) {
    throw new BadRequestError(
      `body/frequencyOffset must be one of ${SUB_MINUTE_OFFSETS.join(', ')} (seconds) when frequency is 0`,
    );
  }
  const slugs = [...new Set(body.privateLocations ?? [])];
  const locationIds: string[] = [];
  for (const slug of slugs) {
    const location = await store.locations.getBySlug(accountId, slug);
    if (!location) {
      throw new BadRequestError(`body/privateLocations: no private location with slugName "${slug}" in this account`);
    }
    locationIds.push(location.id);
  }
  // `locations` (data centers) is kept only so reference clients round-trip; nothing runs there.
  const normalized = { ...body, privateLocations: slugs, locations: body.locations ?? [] };
  return {
    checkType: 'API' as const,
    name: body.name,
    activated: body.activated,
    muted: body.muted,
    frequency: body.frequency,
    // Seconds of a sub-minute check; for minute frequencies the scheduler ignores it, so store none.
    frequencyOffset: body.frequency === 0 ? (body.frequencyOffset ?? null) : null,
    locationIds,
    body: normalized as Record<string, unknown>,
  };
}

/** PUT changes only the properties it carries; `request` is merged one level deep. */
function mergeUpdate(existing: Record<string, unknown>, patch: Static<typeof ApiCheckUpdateBody>): ApiCheckBody {
  const request = { ...(existing.request as object), ...(patch.request ?? {}) };
  return { ...existing, ...patch, request } as ApiCheckBody;
}

export const checkRoutes: FastifyPluginAsync<{ store: Store; hooks: ServiceHooks }> = async (fastify, { store, hooks }) => {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();

  app.post(
    '/v1/checks/api',
    { schema: { body: ApiCheckCreateBody, response: { 201: ApiCheckResponse, ...commonErrors } } },
    async (request, reply) => {
      const accountId = request.account.id;
      const fields = await resolveApiCheck(store, accountId, request.body);
      const check = await store.checks.create({ accountId, ...fields });
      await hooks.checkChanged(accountId, check.id, check);
      return reply.status(201).send(checkView(check));
    },
  );

  app.put(
    '/v1/checks/api/:id',
    { schema: { params: IdParams, body: ApiCheckUpdateBody, response: { 200: ApiCheckResponse, ...commonErrors } } },
    async (request) => {
      const accountId = request.account.id;
      const existing = await store.checks.get(accountId, request.params.id);
      if (existing?.checkType !== 'API') throw notFound();
      const fields = await resolveApiCheck(store, accountId, mergeUpdate(existing.body, request.body));
      const updated = await store.checks.update(accountId, existing.id, fields);
      if (!updated) throw notFound();
      await hooks.checkChanged(accountId, updated.id, updated);
      return checkView(updated);
    },
  );

  app.get(
    '/v1/checks',
    { schema: { querystring: ListQuery, response: { 200: Type.Array(ApiCheckResponse), ...commonErrors } } },
    async (request) => {
      const { limit, page, checkType } = request.query;
      // Reference types this service does not have (HEARTBEAT, URL, ...) match no check.
      if (checkType !== undefined && !isCheckType(checkType)) return [];
      const checks = await store.checks.list(request.account.id, { limit, page, ...(checkType ? { checkType } : {}) });
      return checks.map(checkView);
    },
  );

  app.get(
    '/v1/checks/:id',
    { schema: { params: IdParams, response: { 200: ApiCheckResponse, ...commonErrors } } },
    async (request) => {
      const check = await store.checks.get(request.account.id, request.params.id);
      if (!check) throw notFound();
      return checkView(check);
    },
  );

  app.delete('/v1/checks/:id', { schema: { params: IdParams, response: { 204: NoContent, ...commonErrors } } }, async (request, reply) => {
    const accountId = request.account.id;
    if (!(await store.checks.delete(accountId, request.params.id))) throw notFound();
    await hooks.checkChanged(accountId, request.params.id, undefined);
    return reply.status(204).send(null);
  });
};
