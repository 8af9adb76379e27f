/**
 * Heartbeat checks: POST /v1/checks/heartbeat and PUT /v1/checks/heartbeat/{id}. A heartbeat is a
 * check row plus its ping state (store.heartbeats writes both in one transaction); it has no
 * locations and the scheduler never runs it: the monitored job pings /ping/{pingToken} instead (see
 * ping.ts) and the heartbeat monitor records FAILING when a deadline passes (heartbeats/monitor.ts).
 * Listing, reading and deleting go through /v1/checks like every other type.
 */
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyPluginAsync } from 'fastify';
import {
  type HeartbeatCheckBody,
  HeartbeatCheckCreateBody,
  HeartbeatCheckResponse,
  HeartbeatCheckUpdateBody,
  heartbeatCheckView,
  heartbeatTimingMs,
  newPingToken,
} from '../checks/heartbeat-check-schema.ts';
import {
  AutoAssignQuery,
  subscriptionsOfCheck,
  takeSubscriptions,
} from '../alert-channels/subscriber-subscriptions.ts';
import type { ServiceConfig } from '../config.ts';
import type { HeartbeatCheckInput } from '../store/heartbeat-dashboard-types.ts';
import type { Store } from '../store/store.ts';
import { checkNotFound } from './check-writes.ts';
import { ApiErrorSchema, commonErrors, IdParams } from './schemas.ts';

export interface HeartbeatRouteOptions {
  store: Store;
  config: Pick<ServiceConfig, 'publicUrl'>;
  /** The clock deadlines start from; tests pass their own. */
  now?: () => number;
}

/** The stored body (defaults filled, the token inside `heartbeat`) and the repository input. */
function toInput(body: Omit<HeartbeatCheckBody, 'alertChannelSubscriptions'>, pingToken: string): HeartbeatCheckInput {
  const { periodMs, graceMs } = heartbeatTimingMs(body.heartbeat);
  const { period, periodUnit, grace, graceUnit } = body.heartbeat;
  const stored = {
    name: body.name,
    checkType: 'HEARTBEAT' as const,
    activated: body.activated,
    muted: body.muted,
    tags: body.tags,
    locations: body.locations ?? [],
    description: body.description ?? null,
    heartbeat: { period, periodUnit, grace, graceUnit, pingToken },
  };
  return {
    // frequency means nothing for a heartbeat; the column needs a value, the body keeps none.
    check: {
      name: body.name,
      activated: body.activated,
      muted: body.muted,
      frequency: 0,
      frequencyOffset: null,
      body: stored,
    },
    periodMs,
    graceMs,
    pingToken,
  };
}

export const heartbeatCheckRoutes: FastifyPluginAsync<HeartbeatRouteOptions> = async (
  fastify,
  { store, config, now = Date.now },
) => {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();

  app.post(
    '/v1/checks/heartbeat',
    {
      schema: {
        querystring: AutoAssignQuery,
        body: HeartbeatCheckCreateBody,
        response: { 201: HeartbeatCheckResponse, 409: ApiErrorSchema, ...commonErrors },
      },
    },
    async (request, reply) => {
      const accountId = request.account.id;
      const subs = await takeSubscriptions(store, accountId, request.body);
      const input = toInput(subs.rest, subs.rest.heartbeat.pingToken ?? newPingToken());
      const { check } = await store.heartbeats.create(accountId, input, now());
      await subs.created({ checkId: check.id }, request.query.autoAssignAlerts);
      return reply
        .status(201)
        .send(heartbeatCheckView(check, config.publicUrl, await subscriptionsOfCheck(store, accountId, check.id)));
    },
  );

  app.put(
    '/v1/checks/heartbeat/:id',
    {
      schema: {
        params: IdParams,
        querystring: AutoAssignQuery,
        body: HeartbeatCheckUpdateBody,
        response: { 200: HeartbeatCheckResponse, 409: ApiErrorSchema, ...commonErrors },
      },
    },
    async (request) => {
      const accountId = request.account.id;
      const existing = await store.checks.get(accountId, request.params.id);
      // Another type's check under this path reads as absent, like another account's.
      if (existing?.checkType !== 'HEARTBEAT') throw checkNotFound();
      const before = existing.body as unknown as HeartbeatCheckBody & { heartbeat: { pingToken: string } };
      const subs = await takeSubscriptions(store, accountId, request.body);
      const patch = subs.rest;
      // PUT changes only what it carries; `heartbeat` is merged one level deep.
      const merged = { ...before, ...patch, heartbeat: { ...before.heartbeat, ...(patch.heartbeat ?? {}) } } as Omit<
        HeartbeatCheckBody,
        'alertChannelSubscriptions'
      >;
      const input = toInput(merged, patch.heartbeat?.pingToken ?? before.heartbeat.pingToken);
      const updated = await store.heartbeats.update(accountId, existing.id, input, now());
      if (!updated) throw checkNotFound();
      await subs.updated({ checkId: updated.check.id });
      return heartbeatCheckView(
        updated.check,
        config.publicUrl,
        await subscriptionsOfCheck(store, accountId, updated.check.id),
      );
    },
  );
};
