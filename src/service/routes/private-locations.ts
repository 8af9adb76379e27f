/**
 * Private locations and their keys. A location is where agents run checks; agents authenticate
 * with one of its `pl_` keys. Raw keys appear only in the response that creates them.
 */
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyPluginAsync } from 'fastify';
import { Type } from 'typebox';
import { NotFoundError } from '../http/errors.ts';
import type { LocationKeyRecord, PrivateLocation, Store } from '../store/store.ts';
import { ApiErrorSchema, commonErrors, IdParams, NoContent, Nullable } from './schemas.ts';

/**
 * The reference's slugName pattern: 1-30 letters, digits and dashes, and never shaped like a data
 * center region (e.g. `eu-west-1`), so a slug cannot be mistaken for a public location.
 */
export const SLUG_NAME_PATTERN =
  '^((?!((us(-gov)?|ap|ca|cn|eu|sa|af|me)-(central|(north|south)?(east|west)?)-\\d+))[a-zA-Z0-9-]{1,30})$';

/**
 * A key the API issues (a private location's agent key, a dashboard's viewer key): its raw value
 * only in the response that created it, masked ever after.
 */
export const IssuedKeySchema = Type.Object({
  id: Type.String(),
  /** Only in the response that created the key. */
  rawKey: Type.Optional(Type.String()),
  maskedKey: Type.String(),
  created_at: Type.String({ format: 'date-time' }),
  updated_at: Nullable(Type.String({ format: 'date-time' })),
});

const LocationSchema = Type.Object({
  id: Type.String(),
  name: Type.String(),
  slugName: Type.String(),
  icon: Type.String(),
  created_at: Type.String({ format: 'date-time' }),
  updated_at: Nullable(Type.String({ format: 'date-time' })),
  keys: Type.Array(IssuedKeySchema),
  proxyUrl: Nullable(Type.String()),
  lastSeen: Type.Optional(Nullable(Type.String({ format: 'date-time' }))),
  agentCount: Type.Optional(Nullable(Type.Number())),
  runningAgents: Type.Optional(
    Type.Array(
      Type.Object({
        version: Type.String(),
        isOutdated: Type.Boolean(),
        count: Type.Number(),
        agents: Type.Array(Type.Object({ id: Type.String(), lastSeenAt: Type.String() })),
      }),
    ),
  ),
});

/**
 * An agent counts as running when it has not deregistered and called in lately. Idle agents hold a
 * lease request open for at most JOB_LEASE_MAX_WAIT_SECONDS (25 s by default) and call again at once,
 * so two minutes of silence means it is gone, whatever the reason.
 */
export const RUNNING_AGENT_WINDOW_MS = 2 * 60_000;

/** The reference's lastSeen, agentCount and runningAgents (by version), from the agents registry. */
async function agentsView(store: Store, location: PrivateLocation, now = Date.now()) {
  const agents = await store.agents.listByLocation(location.id);
  const running = agents.filter((a) => a.goneAt === null && now - Date.parse(a.lastSeenAt) <= RUNNING_AGENT_WINDOW_MS);
  const byVersion = new Map<string, typeof running>();
  for (const agent of running) byVersion.set(agent.version, [...(byVersion.get(agent.version) ?? []), agent]);
  const lastSeen = agents.reduce<string | null>(
    (latest, a) => (latest === null || a.lastSeenAt > latest ? a.lastSeenAt : latest),
    null,
  );
  return {
    lastSeen,
    agentCount: running.length,
    runningAgents: [...byVersion].map(([version, list]) => ({
      version,
      // No minimum agent version is enforced yet, so no running agent is outdated.
      isOutdated: false,
      count: list.length,
      agents: list.map((a) => ({ id: a.id, lastSeenAt: a.lastSeenAt })),
    })),
  };
}

const CreateBody = Type.Object(
  {
    name: Type.String({ minLength: 1, maxLength: 255 }),
    slugName: Type.String({ pattern: SLUG_NAME_PATTERN }),
    icon: Type.String({ minLength: 1, default: 'location' }),
    proxyUrl: Nullable(Type.String(), { default: null }),
  },
  { additionalProperties: false },
);

const UpdateBody = Type.Object(
  {
    name: Type.String({ minLength: 1, maxLength: 255 }),
    icon: Type.Optional(Type.String({ minLength: 1 })),
    proxyUrl: Type.Optional(Nullable(Type.String())),
  },
  { additionalProperties: false },
);

const KeyParams = Type.Object({ id: Type.String({ minLength: 1 }), keyId: Type.String({ minLength: 1 }) });

/** A key as IssuedKeySchema answers it; `rawKey` only when the key was just made. */
export function issuedKeyView(
  key: Pick<LocationKeyRecord, 'id' | 'maskedKey' | 'createdAt' | 'updatedAt'>,
  rawKey?: string,
) {
  return {
    id: key.id,
    ...(rawKey === undefined ? {} : { rawKey }),
    maskedKey: key.maskedKey,
    created_at: key.createdAt,
    updated_at: key.updatedAt,
  };
}

function locationView(location: PrivateLocation, keys: ReturnType<typeof issuedKeyView>[]) {
  return {
    id: location.id,
    name: location.name,
    slugName: location.slugName,
    icon: location.icon,
    created_at: location.createdAt,
    updated_at: location.updatedAt,
    keys,
    proxyUrl: location.proxyUrl,
  };
}

async function maskedView(store: Store, location: PrivateLocation) {
  const keys = await store.locations.listKeys(location.id);
  return {
    ...locationView(
      location,
      keys.map((k) => issuedKeyView(k)),
    ),
    ...(await agentsView(store, location)),
  };
}

const notFound = () => new NotFoundError('Private location not found');

export const privateLocationRoutes: FastifyPluginAsync<{ store: Store }> = async (fastify, { store }) => {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();

  app.get(
    '/v1/private-locations',
    { schema: { response: { 200: Type.Array(LocationSchema), 401: ApiErrorSchema } } },
    async (request) => {
      const locations = await store.locations.list(request.account.id);
      return Promise.all(locations.map((l) => maskedView(store, l)));
    },
  );

  app.post(
    '/v1/private-locations',
    { schema: { body: CreateBody, response: { 201: LocationSchema, 409: ApiErrorSchema, ...commonErrors } } },
    async (request, reply) => {
      const accountId = request.account.id;
      const { location, key, rawKey } = await createWithFirstKey(store, accountId, request.body);
      return reply.status(201).send(locationView(location, [issuedKeyView(key, rawKey)]));
    },
  );

  app.get(
    '/v1/private-locations/:id',
    { schema: { params: IdParams, response: { 200: LocationSchema, ...commonErrors } } },
    async (request) => {
      const location = await store.locations.get(request.account.id, request.params.id);
      if (!location) throw notFound();
      return maskedView(store, location);
    },
  );

  app.put(
    '/v1/private-locations/:id',
    { schema: { params: IdParams, body: UpdateBody, response: { 200: LocationSchema, ...commonErrors } } },
    async (request) => {
      const accountId = request.account.id;
      const existing = await store.locations.get(accountId, request.params.id);
      if (!existing) throw notFound();
      // PUT replaces the name; icon and proxyUrl keep their values when left out.
      const updated = await store.locations.update(accountId, existing.id, {
        name: request.body.name,
        icon: request.body.icon ?? existing.icon,
        proxyUrl: request.body.proxyUrl === undefined ? existing.proxyUrl : request.body.proxyUrl,
      });
      if (!updated) throw notFound();
      return maskedView(store, updated);
    },
  );

  app.delete(
    '/v1/private-locations/:id',
    { schema: { params: IdParams, response: { 204: NoContent, 409: ApiErrorSchema, ...commonErrors } } },
    async (request, reply) => {
      if (!(await store.locations.delete(request.account.id, request.params.id))) throw notFound();
      return reply.status(204).send(null);
    },
  );

  app.post(
    '/v1/private-locations/:id/keys',
    { schema: { params: IdParams, response: { 201: IssuedKeySchema, 409: ApiErrorSchema, ...commonErrors } } },
    async (request, reply) => {
      // createKey answers 404 for another account's location and 409 at the two-key limit.
      const { record, rawKey } = await store.locations.createKey(request.account.id, request.params.id);
      return reply.status(201).send(issuedKeyView(record, rawKey));
    },
  );

  app.delete(
    '/v1/private-locations/:id/keys/:keyId',
    { schema: { params: KeyParams, response: { 204: NoContent, ...commonErrors } } },
    async (request, reply) => {
      const { id, keyId } = request.params;
      if (!(await store.locations.deleteKey(request.account.id, id, keyId))) {
        throw new NotFoundError('Private location key not found');
      }
      return reply.status(204).send(null);
    },
  );
};

/**
 * A location is created with its first key, since a location nobody can connect to is useless.
 * The Store keeps transactions inside single repository methods (none spans an await), so this
 * compensates instead: if the key cannot be created, the new location is removed again.
 */
async function createWithFirstKey(
  store: Store,
  accountId: string,
  body: { name: string; slugName: string; icon: string; proxyUrl: string | null },
): Promise<{ location: PrivateLocation; key: LocationKeyRecord; rawKey: string }> {
  const location = await store.locations.create(accountId, body);
  try {
    const { record, rawKey } = await store.locations.createKey(accountId, location.id);
    return { location, key: record, rawKey };
  } catch (err) {
    await store.locations.delete(accountId, location.id).catch(() => undefined);
    throw err;
  }
}
