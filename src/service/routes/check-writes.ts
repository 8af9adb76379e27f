/**
 * What creating and updating a check of any type has in common: the rules JSON Schema cannot express
 * (sub-minute frequency offsets), the mapping of privateLocations slugs to location ids, PUT's merge,
 * GET's view, and telling the scheduler (hooks.checkChanged). Each check type's route file
 * (checks.ts for API, checks-tcp.ts, checks-dns.ts, checks-icmp.ts) registers its POST and PUT
 * through checkWriteRoutes with its own schemas and, if it needs one, a check of its own.
 */
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance, FastifyPluginAsync } from 'fastify';
import type { Static, TObject } from 'typebox';
import type { CheckType } from '../../shared/checks/types.ts';
import type { ServiceHooks } from '../app.ts';
import {
  AutoAssignQuery,
  subscriptionsOfCheck,
  takeSubscriptions,
} from '../alert-channels/subscriber-subscriptions.ts';
import type { CheckResponse } from '../checks/check-response.ts';
import { SUB_MINUTE_OFFSETS } from '../checks/common-check-schema.ts';
import { type AssertionInput, assertAssertionsUsable } from '../checks/assertion-rules.ts';
import { resolveVariableList, type StoredVariable } from '../checks/environment-variables-schema.ts';
import { resolveGroupUrl } from '../checks/group-merge.ts';
import { validateGroupId } from '../checks/group-membership.ts';
import { BadRequestError, NotFoundError } from '../http/errors.ts';
import { maskSecretValues } from '../secrets/variables.ts';
import type { ChannelRef } from '../store/alert-channel-types.ts';
import type { StoredCheckGroup } from '../store/check-group-types.ts';
import type { Store, StoredCheck } from '../store/store.ts';
import { assertHttpUrl } from './http-url.ts';
import { commonErrors, IdParams } from './schemas.ts';
import { assertClientTlsUsable } from '../checks/client-tls.ts';
import { assertOwnSnippets } from './snippets.ts';

export const checkNotFound = () => new NotFoundError('Check not found');

/** The properties every check body has after validation (defaults filled). */
export interface CheckBodyBase {
  name: string;
  activated: boolean;
  muted: boolean;
  frequency: number;
  frequencyOffset?: number;
  privateLocations: string[] | null;
  locations: string[] | null;
  [key: string]: unknown;
}

/**
 * GET's shape: the stored body with id, the check's subscriptions (kept in their own table) and
 * timestamps (created_at/updated_at as the reference).
 */
export function checkView(check: StoredCheck, subscriptions: ChannelRef[]): Static<typeof CheckResponse> {
  // The body was validated against its type's create schema (defaults filled) before it was stored.
  // Secret variable values are never returned (null, as the reference says).
  const view = maskSecretValues({
    id: check.id,
    ...check.body,
    alertChannelSubscriptions: subscriptions,
    created_at: check.createdAt,
    updated_at: check.updatedAt,
  });
  return view as unknown as Static<typeof CheckResponse>;
}

/** A single check's view, its subscriptions read from the store. */
export async function loadCheckView(store: Store, check: StoredCheck): Promise<Static<typeof CheckResponse>> {
  return checkView(check, await subscriptionsOfCheck(store, check.accountId, check.id));
}

/**
 * An API check's URL (http/https, placeholders allowed; in a group, as the group's base URL makes
 * it) and any check's assertions must be able to work.
 */
function assertRequestUsable(checkType: CheckType, body: CheckBodyBase, group: StoredCheckGroup | undefined): void {
  const request = body.request as { url?: unknown; assertions?: AssertionInput[] } | undefined;
  if (!request) return;
  if (checkType === 'API') {
    const url = String(request.url ?? '');
    assertHttpUrl('body/request/url', url, {
      placeholders: true,
      resolved: resolveGroupUrl(url, group?.body.apiCheckDefaults?.url),
    });
  }
  assertAssertionsUsable('body/request/assertions', request.assertions);
}

/**
 * Checks what the schema cannot and maps privateLocations slugs to this account's location ids.
 * Returns the StoredCheck fields for the repository.
 */
export async function resolveCheckFields(
  store: Store,
  accountId: string,
  checkType: CheckType,
  body: CheckBodyBase,
  /** PUT: the stored body, whose secret values a null value keeps. */
  storedBody?: Record<string, unknown>,
) {
  // A group of another account (or none) is a 400 naming groupId, never a hint it exists.
  const group = await validateGroupId(store, accountId, body);
  assertRequestUsable(checkType, body, group);
  // A snippet of another account (or none) likewise.
  await assertOwnSnippets(store, accountId, body);
  // A client certificate of another account likewise; a CA bundle must parse.
  await assertClientTlsUsable(store.clientCertificates, accountId, body);
  if (body.environmentVariables !== undefined) {
    const given = body.environmentVariables as Parameters<typeof resolveVariableList>[1];
    const stored = (storedBody?.environmentVariables ?? []) as StoredVariable[];
    body = { ...body, environmentVariables: resolveVariableList('body/environmentVariables', given, stored) };
  }
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
    checkType,
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
export function mergeUpdate(existing: Record<string, unknown>, patch: Record<string, unknown>): CheckBodyBase {
  const request = { ...(existing.request as object), ...((patch.request as object | undefined) ?? {}) };
  return { ...existing, ...patch, request } as unknown as CheckBodyBase;
}

export interface CheckWriteOptions {
  /** e.g. '/v1/checks/tcp'; POST goes to it, PUT to `${path}/:id`. */
  path: string;
  checkType: CheckType;
  createBody: TObject;
  updateBody: TObject;
  response: TObject;
  /**
   * Rules of the type beyond its schema, run on the full body (after PUT's merge); returns the body
   * to store (e.g. with aliases normalised) or throws a BadRequestError naming the field.
   */
  normalize?: (body: CheckBodyBase) => CheckBodyBase;
}

/** Registers POST `path` and PUT `path/:id` for one check type. */
export function registerCheckWrites(
  fastify: FastifyInstance,
  store: Store,
  hooks: ServiceHooks,
  o: CheckWriteOptions,
): void {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  const normalize = o.normalize ?? ((body: CheckBodyBase) => body);

  app.post(
    o.path,
    { schema: { querystring: AutoAssignQuery, body: o.createBody, response: { 201: o.response, ...commonErrors } } },
    async (request, reply) => {
      const accountId = request.account.id;
      const subs = await takeSubscriptions(store, accountId, request.body as Record<string, unknown>);
      const fields = await resolveCheckFields(
        store,
        accountId,
        o.checkType,
        normalize(subs.rest as unknown as CheckBodyBase),
      );
      const check = await store.checks.create({ accountId, ...fields });
      await subs.created({ checkId: check.id }, request.query.autoAssignAlerts);
      await hooks.checkChanged(accountId, check.id, check);
      return reply.status(201).send(await loadCheckView(store, check));
    },
  );

  app.put(
    `${o.path}/:id`,
    {
      schema: {
        params: IdParams,
        querystring: AutoAssignQuery,
        body: o.updateBody,
        response: { 200: o.response, ...commonErrors },
      },
    },
    async (request) => {
      const accountId = request.account.id;
      const { id } = request.params as { id: string };
      const existing = await store.checks.get(accountId, id);
      // Another type's check under this path reads as absent, like another account's.
      if (existing?.checkType !== o.checkType) throw checkNotFound();
      const subs = await takeSubscriptions(store, accountId, request.body as Record<string, unknown>);
      const body = normalize(mergeUpdate(existing.body, subs.rest));
      const fields = await resolveCheckFields(store, accountId, o.checkType, body, existing.body);
      const updated = await store.checks.update(accountId, existing.id, fields);
      if (!updated) throw checkNotFound();
      await subs.updated({ checkId: updated.id });
      await hooks.checkChanged(accountId, updated.id, updated);
      return loadCheckView(store, updated);
    },
  );
}

/** A route plugin with nothing but one check type's POST and PUT. */
export function checkWriteRoutes(o: CheckWriteOptions): FastifyPluginAsync<{ store: Store; hooks: ServiceHooks }> {
  return async (fastify, { store, hooks }) => {
    registerCheckWrites(fastify, store, hooks, o);
  };
}
