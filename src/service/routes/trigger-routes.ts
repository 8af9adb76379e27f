/**
 * What check triggers (check-triggers.ts) and group triggers (check-group-triggers.ts) share: the
 * account API that reads, creates and deletes the owner's one trigger token, and the trigger URL,
 * which needs no API key because the token in its path is the credential.
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { type TSchema, Type } from 'typebox';
import { NotFoundError } from '../http/errors.ts';
import { ApiErrorSchema, commonErrors, NoContent } from './schemas.ts';

/** A stored trigger token; `K` names its owner's id (checkId, groupId). */
export type TriggerToken<K extends string, Id> = {
  id: number;
  token: string;
  createdAt: string;
  calledAt: string | null;
  updatedAt: string | null;
} & Record<K, Id>;

/** The account API of one owner type: where its token lives and how its store reads and writes it. */
export interface TriggerTokenApi<K extends string, Id, Owner> {
  /** The owner's id parameter, e.g. `checkId`. */
  key: K;
  idSchema: TSchema;
  /** e.g. `/v1/triggers/checks`. */
  prefix: string;
  /** The 404 of an owner without a trigger. */
  noTrigger: string;
  /** The account's owner; throws its 404 when there is none. */
  requireOwner(accountId: string, id: Id): Promise<Owner>;
  /** Throws when the owner cannot have a trigger. */
  assertCanHaveTrigger?(owner: Owner): void;
  get(accountId: string, id: Id): Promise<TriggerToken<K, Id> | undefined>;
  ensure(accountId: string, id: Id): Promise<{ trigger: TriggerToken<K, Id>; created: boolean }>;
  delete(accountId: string, id: Id): Promise<boolean>;
}

/** The trigger URL of one owner type. */
export interface TriggerUrl<K extends string, Id> {
  key: K;
  idSchema: TSchema;
  /** e.g. `/checks/:checkId/trigger/:token`. */
  path: string;
  /** What a trigger started (the 200). */
  startedSchema: TSchema;
  /** The 404 of a wrong token or an unknown owner. */
  notFound: string;
  /** The owner's account when `token` is its trigger token; records the call. */
  call(id: Id, token: string, now: string): Promise<{ accountId: string } | undefined>;
  trigger(accountId: string, id: Id): Promise<unknown>;
}

const ownerKey = <K extends string>(key: K, schema: TSchema) => ({ [key]: schema }) as Record<K, TSchema>;

/** The token as the account API shows it, its owner's id last. */
export function triggerSchema<K extends string>(key: K, idSchema: TSchema) {
  return Type.Object({
    id: Type.Number(),
    token: Type.String(),
    created_at: Type.String(),
    called_at: Type.Union([Type.String(), Type.Null()]),
    updated_at: Type.Union([Type.String(), Type.Null()]),
    ...ownerKey(key, idSchema),
  });
}

function triggerView<K extends string, Id>(key: K, t: TriggerToken<K, Id>) {
  return {
    id: t.id,
    token: t.token,
    created_at: t.createdAt,
    called_at: t.calledAt,
    updated_at: t.updatedAt,
    [key]: t[key],
  };
}

const idOf = <K extends string, Id>(request: FastifyRequest, key: K) => (request.params as Record<K, Id>)[key];

/** GET, POST and DELETE `{prefix}/:{key}`: one token per owner. */
export function registerTriggerTokenApi<K extends string, Id, Owner>(
  app: FastifyInstance,
  api: TriggerTokenApi<K, Id, Owner>,
): void {
  const path = `${api.prefix}/:${api.key}`;
  const params = Type.Object(ownerKey(api.key, api.idSchema));
  const view = triggerSchema(api.key, api.idSchema);
  const noTrigger = () => new NotFoundError(api.noTrigger);

  app.get(path, { schema: { params, response: { 200: view, ...commonErrors } } }, async (request) => {
    const id = idOf<K, Id>(request, api.key);
    await api.requireOwner(request.account.id, id);
    const trigger = await api.get(request.account.id, id);
    if (!trigger) throw noTrigger();
    return triggerView(api.key, trigger);
  });

  app.post(
    path,
    { schema: { params, response: { 200: view, 201: view, ...commonErrors } } },
    async (request, reply) => {
      const id = idOf<K, Id>(request, api.key);
      const owner = await api.requireOwner(request.account.id, id);
      api.assertCanHaveTrigger?.(owner);
      // One token per owner: creating it again returns the existing one (200) rather than a second.
      const { trigger, created } = await api.ensure(request.account.id, id);
      return reply.status(created ? 201 : 200).send(triggerView(api.key, trigger));
    },
  );

  app.delete(path, { schema: { params, response: { 204: NoContent, ...commonErrors } } }, async (request, reply) => {
    const id = idOf<K, Id>(request, api.key);
    await api.requireOwner(request.account.id, id);
    if (!(await api.delete(request.account.id, id))) throw noTrigger();
    return reply.status(204).send(null);
  });
}

/** GET and POST the trigger URL; registered outside the account-authenticated API. */
export function registerTriggerUrl<K extends string, Id>(app: FastifyInstance, url: TriggerUrl<K, Id>): void {
  const handler = async (request: FastifyRequest) => {
    const id = idOf<K, Id>(request, url.key);
    const { token } = request.params as { token: string };
    // Wrong token and unknown owner read the same, so neither can be probed.
    const owner = await url.call(id, token, new Date().toISOString());
    if (!owner) throw new NotFoundError(url.notFound);
    const started = await url.trigger(owner.accountId, id);
    if (!started) throw new NotFoundError(url.notFound);
    return started;
  };
  // `security: []`: the token in the path is the credential, as for pings.
  const schema = {
    params: Type.Object({
      ...ownerKey(url.key, url.idSchema),
      token: Type.String({ minLength: 1, maxLength: 200 }),
    }),
    security: [],
    response: { 200: url.startedSchema, 400: ApiErrorSchema, 404: ApiErrorSchema },
  };
  app.get(url.path, { schema }, handler);
  app.post(url.path, { schema }, handler);
}
