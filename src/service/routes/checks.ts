/**
 * Checks: POST/PUT of API checks (/v1/checks/api), and listing, reading and deleting checks of every
 * type. Other types' POST/PUT live in checks-<type>.ts; all of them go through check-writes.ts, which
 * tells the scheduler of each change through hooks.checkChanged.
 */
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyPluginAsync } from 'fastify';
import { Type } from 'typebox';
import { CHECK_TYPES } from '../../shared/checks/types.ts';
import type { ServiceHooks } from '../app.ts';
import { ApiCheckCreateBody, ApiCheckResponse, ApiCheckUpdateBody } from '../checks/api-check-schema.ts';
import { CheckResponse } from '../checks/check-response.ts';
import { heartbeatCheckView } from '../checks/heartbeat-check-schema.ts';
import type { ServiceConfig } from '../config.ts';
import type { ChannelRef } from '../store/alert-channel-types.ts';
import type { Store, StoredCheck } from '../store/store.ts';
import { checkNotFound, checkView, registerCheckWrites } from './check-writes.ts';
import { commonErrors, IdParams, NoContent, PageNumberQuery } from './schemas.ts';

/** The reference's checkType filter values; types this service lacks simply match nothing. */
const CHECK_TYPE_FILTER = [
  'AGENTIC', 'API', 'BROWSER', 'HEARTBEAT', 'ICMP', 'MULTI_STEP', 'TCP', 'PLAYWRIGHT', 'TRACEROUTE', 'URL', 'DNS', 'SSL', 'GRPC',
] as const;

const ListQuery = Type.Object({
  ...PageNumberQuery(),
  checkType: Type.Optional(Type.Enum([...CHECK_TYPE_FILTER])),
});

const isCheckType = (value: string): value is StoredCheck['checkType'] =>
  value === 'HEARTBEAT' || (CHECK_TYPES as readonly string[]).includes(value);

/**
 * A check of any type as GET /v1/checks/{id} shows it: secret values masked, and a heartbeat's
 * pingUrl derived from PUBLIC_URL on every read (see heartbeat-check-schema.ts).
 */
export function anyCheckView(check: StoredCheck, publicUrl: URL, subs: ChannelRef[]) {
  return check.checkType === 'HEARTBEAT' ? heartbeatCheckView(check, publicUrl, subs) : checkView(check, subs);
}

export const checkRoutes: FastifyPluginAsync<{ store: Store; hooks: ServiceHooks; config: Pick<ServiceConfig, 'publicUrl'> }> = async (
  fastify,
  { store, hooks, config },
) => {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  const viewOf = (check: StoredCheck, subs: ChannelRef[]) => anyCheckView(check, config.publicUrl, subs);
  /** The checks' views, with their subscriptions read in one query. */
  const viewsOf = async (accountId: string, checks: StoredCheck[]) => {
    const subs = await store.alertChannels.checkSubscriptions(accountId, checks.map((c) => c.id));
    return checks.map((c) => viewOf(c, subs.get(c.id) ?? []));
  };

  registerCheckWrites(fastify, store, hooks, {
    path: '/v1/checks/api',
    checkType: 'API',
    createBody: ApiCheckCreateBody,
    updateBody: ApiCheckUpdateBody,
    response: ApiCheckResponse,
  });

  app.get(
    '/v1/checks',
    { schema: { querystring: ListQuery, response: { 200: Type.Array(CheckResponse), ...commonErrors } } },
    async (request) => {
      const { limit, page, checkType } = request.query;
      // Reference types this service does not have (HEARTBEAT, URL, ...) match no check.
      if (checkType !== undefined && !isCheckType(checkType)) return [];
      const checks = await store.checks.list(request.account.id, { limit, page, ...(checkType ? { checkType } : {}) });
      return viewsOf(request.account.id, checks);
    },
  );

  app.get(
    '/v1/checks/:id',
    { schema: { params: IdParams, response: { 200: CheckResponse, ...commonErrors } } },
    async (request) => {
      const check = await store.checks.get(request.account.id, request.params.id);
      if (!check) throw checkNotFound();
      const [view] = await viewsOf(request.account.id, [check]);
      return view as NonNullable<typeof view>;
    },
  );

  app.delete('/v1/checks/:id', { schema: { params: IdParams, response: { 204: NoContent, ...commonErrors } } }, async (request, reply) => {
    const accountId = request.account.id;
    if (!(await store.checks.delete(accountId, request.params.id))) throw checkNotFound();
    await hooks.checkChanged(accountId, request.params.id, undefined);
    return reply.status(204).send(null);
  });
};
