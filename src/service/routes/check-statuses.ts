/**
 * The current status of checks (the reference's CheckStatus): what the latest counted result
 * showed, kept by src/service/alerting/status-service.ts as results are stored. A check without a
 * counted result yet has an empty status (nothing failing, nulls).
 */
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyPluginAsync } from 'fastify';
import { type Static, Type } from 'typebox';
import { NotFoundError } from '../http/errors.ts';
import { type CheckStatusRecord, emptyCheckStatus } from '../store/check-status-types.ts';
import type { Store } from '../store/store.ts';
import { commonErrors, Nullable } from './schemas.ts';

const Params = Type.Object({ checkId: Type.String({ minLength: 1 }) });

const CheckStatusSchema = Type.Object({
  name: Type.String(),
  checkId: Type.String(),
  hasFailures: Type.Boolean(),
  hasErrors: Type.Boolean(),
  isDegraded: Type.Boolean(),
  longestRun: Nullable(Type.Number()),
  shortestRun: Nullable(Type.Number()),
  lastRunLocation: Nullable(Type.String()),
  lastCheckRunId: Nullable(Type.String()),
  sslDaysRemaining: Nullable(Type.Number()),
  created_at: Type.String({ format: 'date-time' }),
  updated_at: Nullable(Type.String({ format: 'date-time' })),
});

type CheckStatusView = Static<typeof CheckStatusSchema>;

function statusView(s: CheckStatusRecord): CheckStatusView {
  return {
    name: s.name,
    checkId: s.checkId,
    hasFailures: s.hasFailures,
    hasErrors: s.hasErrors,
    isDegraded: s.isDegraded,
    longestRun: s.longestRun,
    shortestRun: s.shortestRun,
    lastRunLocation: s.lastRunLocation,
    lastCheckRunId: s.lastCheckRunId,
    sslDaysRemaining: s.sslDaysRemaining,
    created_at: s.createdAt,
    updated_at: s.updatedAt,
  };
}

export const checkStatusRoutes: FastifyPluginAsync<{ store: Store }> = async (fastify, { store }) => {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();

  app.get(
    '/v1/check-statuses',
    { schema: { response: { 200: Type.Array(CheckStatusSchema), ...commonErrors } } },
    async (request) => (await store.checkStatuses.list(request.account.id)).map(statusView),
  );

  app.get(
    '/v1/check-statuses/:checkId',
    { schema: { params: Params, response: { 200: CheckStatusSchema, ...commonErrors } } },
    async (request) => {
      const accountId = request.account.id;
      const check = await store.checks.get(accountId, request.params.checkId);
      // Another account's check is a 404 like a missing one.
      if (!check) throw new NotFoundError('Check not found');
      const status = await store.checkStatuses.get(accountId, check.id);
      return statusView(status ?? emptyCheckStatus(check));
    },
  );
};
