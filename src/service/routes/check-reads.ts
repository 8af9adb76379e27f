/**
 * Reading checks of every type: GET /v1/checks, /v2/checks and their {id}. The reference's v2 differs
 * from v1 only by leaving out the flat project fields (project, logicalId, member, pending), which this
 * service never had, so both versions answer the same views with the same filters and
 * applyGroupSettings: checks.ts registers the v1 routes, checkV2Routes the v2 ones. Writes stay on
 * /v1, as in the reference.
 */
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance, FastifyPluginAsync } from 'fastify';
import { Type } from 'typebox';
import { type ApiRequest, CHECK_TYPES } from '../../shared/checks/types.ts';
import { effectivePlacement, groupIdOf, mergeApiRequest, mergeVariables } from '../checks/group-merge.ts';
import { CheckResponse } from '../checks/check-response.ts';
import { heartbeatCheckView } from '../checks/heartbeat-check-schema.ts';
import type { ServiceConfig } from '../config.ts';
import type { StoredCheckGroup } from '../store/check-group-types.ts';
import type { Store, StoredCheck } from '../store/store.ts';
import type { ChannelRef } from '../store/alert-channel-types.ts';
import { checkNotFound, checkView } from './check-writes.ts';
import { REFERENCE_CHECK_TYPES } from './query-schemas.ts';
import { commonErrors, IdParams, PageNumberQuery } from './schemas.ts';

const isCheckType = (value: string): value is StoredCheck['checkType'] =>
  value === 'HEARTBEAT' || (CHECK_TYPES as readonly string[]).includes(value);

/**
 * A check of any type as GET /v1/checks/{id} shows it: secret values masked, and a heartbeat's
 * pingUrl derived from PUBLIC_URL on every read (see heartbeat-check-schema.ts).
 */
export function anyCheckView(check: StoredCheck, publicUrl: URL, subs: ChannelRef[]) {
  return check.checkType === 'HEARTBEAT' ? heartbeatCheckView(check, publicUrl, subs) : checkView(check, subs);
}

/** The checks' views, with their subscriptions read in one query. */
async function anyCheckViews(store: Store, publicUrl: URL, accountId: string, checks: StoredCheck[]) {
  const subs = await store.alertChannels.checkSubscriptions(
    accountId,
    checks.map((c) => c.id),
  );
  return checks.map((c) => anyCheckView(c, publicUrl, subs.get(c.id) ?? []));
}

const ApplyGroupSettings = Type.Boolean({
  default: false,
  description: 'Return group members with their group’s settings applied.',
});

const Tags = Type.Array(Type.String({ minLength: 1, maxLength: 255 }), { maxItems: 100 });

const ListQuery = Type.Object({
  ...PageNumberQuery(),
  // The reference's types: those this service lacks simply match nothing.
  checkType: Type.Optional(Type.Enum([...REFERENCE_CHECK_TYPES])),
  apiCheckUrlFilterPattern: Type.Optional(Type.String({ minLength: 1, maxLength: 2048 })),
  // A single ?tag=a arrives as a string; Fastify's Ajv turns it into a one-element array.
  tag: Type.Optional(Tags),
  // The same as axios writes arrays (tag[]=a&tag[]=b): the reference's CLI sends its --tag flags so.
  'tag[]': Type.Optional(Tags),
  search: Type.Optional(Type.String({ maxLength: 255 })),
  status: Type.Optional(Type.Enum(['passing', 'failing', 'degraded'])),
  applyGroupSettings: Type.Optional(ApplyGroupSettings),
});

const GetQuery = Type.Object({
  // Checks here have no dependencies to include: accepted so clients that send it keep working.
  includeDependencies: Type.Optional(Type.Boolean()),
  applyGroupSettings: Type.Optional(ApplyGroupSettings),
});

type Pair = { key: string; value: unknown };
const pairsOf = (value: unknown): Pair[] => (Array.isArray(value) ? (value as Pair[]) : []);

/**
 * The merge functions build run definitions and keep only key, value (and secret); the view needs each
 * entry as it was stored (`locked` and all), so entries are taken back from the lists they came from.
 */
function asStored(merged: readonly Pair[], ...sources: unknown[]): Pair[] {
  const stored = sources.flatMap(pairsOf);
  return merged.map((m) => stored.find((s) => s.key === m.key && s.value === m.value) ?? { locked: false, ...m });
}

/**
 * A member check as it runs (group-merge.ts, docs/api.md "Check groups"): activation and muting of
 * both, the group's private locations when it has some, its runtime when the check has none, its
 * variables under the check's, and for API checks its apiCheckDefaults.
 */
export function withGroupSettings(check: StoredCheck, group: StoredCheckGroup | undefined): StoredCheck {
  if (!group) return check;
  const placement = effectivePlacement(check, group);
  const g = group.body as unknown as Record<string, unknown>;
  const body: Record<string, unknown> = { ...check.body, activated: placement.activated, muted: placement.muted };
  // Only where the type has them (a heartbeat has neither runtime nor variables).
  if ('runtimeId' in check.body) body.runtimeId = check.body.runtimeId ?? g.runtimeId ?? null;
  if ('environmentVariables' in check.body) {
    const own = check.body.environmentVariables;
    body.environmentVariables = asStored(mergeVariables(g.environmentVariables, own), own, g.environmentVariables);
  }
  if (group.locationIds.length > 0) body.privateLocations = g.privateLocations;
  if (check.checkType === 'API' && check.body.request) {
    const ownRequest = check.body.request as ApiRequest;
    const defaults = group.body.apiCheckDefaults;
    const request = mergeApiRequest(ownRequest, defaults);
    body.request = {
      ...request,
      headers: asStored(request.headers, ownRequest.headers, defaults?.headers),
      queryParameters: asStored(request.queryParameters, ownRequest.queryParameters, defaults?.queryParameters),
    };
  }
  return { ...check, activated: placement.activated, muted: placement.muted, locationIds: placement.locationIds, body };
}

/** The checks with their groups' settings applied, each group read once. */
async function applyGroups(store: Store, accountId: string, checks: StoredCheck[]): Promise<StoredCheck[]> {
  const ids = [...new Set(checks.map(groupIdOf).filter((id): id is number => id !== undefined))];
  const groups = new Map(
    (await Promise.all(ids.map((id) => store.checkGroups.get(accountId, id)))).flatMap((g) =>
      g ? [[g.id, g] as const] : [],
    ),
  );
  return checks.map((c) => {
    const id = groupIdOf(c);
    return withGroupSettings(c, id === undefined ? undefined : groups.get(id));
  });
}

/** GET /{version}/checks and /{version}/checks/{id}, in the calling plugin. */
export function registerCheckReads(fastify: FastifyInstance, store: Store, publicUrl: URL, version: 'v1' | 'v2'): void {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  const viewsOf = async (accountId: string, checks: StoredCheck[], applyGroupSettings: boolean | undefined) =>
    anyCheckViews(
      store,
      publicUrl,
      accountId,
      applyGroupSettings ? await applyGroups(store, accountId, checks) : checks,
    );

  app.get(
    `/${version}/checks`,
    { schema: { querystring: ListQuery, response: { 200: Type.Array(CheckResponse), ...commonErrors } } },
    async (request) => {
      const { limit, page, checkType, apiCheckUrlFilterPattern, search, status, applyGroupSettings } = request.query;
      const tags = [...(request.query.tag ?? []), ...(request.query['tag[]'] ?? [])];
      // Reference types this service does not have match no check.
      if (checkType !== undefined && !isCheckType(checkType)) return [];
      const checks = await store.checks.list(request.account.id, {
        limit,
        page,
        ...(checkType ? { checkType } : {}),
        ...(tags.length > 0 ? { tags } : {}),
        ...(search ? { search } : {}),
        ...(apiCheckUrlFilterPattern ? { urlContains: apiCheckUrlFilterPattern } : {}),
        ...(status ? { status } : {}),
      });
      return viewsOf(request.account.id, checks, applyGroupSettings);
    },
  );

  app.get(
    `/${version}/checks/:id`,
    { schema: { params: IdParams, querystring: GetQuery, response: { 200: CheckResponse, ...commonErrors } } },
    async (request) => {
      const check = await store.checks.get(request.account.id, request.params.id);
      if (!check) throw checkNotFound();
      const [view] = await viewsOf(request.account.id, [check], request.query.applyGroupSettings);
      return view as NonNullable<typeof view>;
    },
  );
}

export const checkV2Routes: FastifyPluginAsync<{ store: Store; config: Pick<ServiceConfig, 'publicUrl'> }> = async (
  fastify,
  { store, config },
) => {
  registerCheckReads(fastify, store, config.publicUrl, 'v2');
};
