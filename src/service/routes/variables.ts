/**
 * Account environment variables (/v1/variables), addressed by key as in the reference. Every check of
 * the account sees them (below its group's and its own: see checks/user-code.ts). A secret value is
 * never returned: responses show it as null ("Secret values are always returned as null"), and a
 * secret stays secret. Values are stored sealed (store/repos/variables.ts).
 */
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyPluginAsync } from 'fastify';
import { type Static, Type } from 'typebox';
import { VARIABLE_VALUE_MAX, VariableKey } from '../checks/environment-variables-schema.ts';
import { BadRequestError, ConflictError, NotFoundError } from '../http/errors.ts';
import { SECRET_VALUE_IN_RESPONSES } from '../secrets/variables.ts';
import type { Store } from '../store/store.ts';
import type { AccountVariable } from '../store/variables-types.ts';
import { ApiErrorSchema, commonErrors, NoContent, Nullable, PageNumberQuery } from './schemas.ts';

/** EnvironmentVariablesV1CreateRequest. */
const CreateBody = Type.Object(
  {
    key: VariableKey,
    value: Type.String({ maxLength: VARIABLE_VALUE_MAX }),
    locked: Type.Boolean({ default: false }),
    secret: Type.Boolean({ default: false }),
  },
  { additionalProperties: false },
);

/**
 * EnvironmentVariablesV1UpdateRequest. No defaults for locked/secret: an omitted flag keeps the stored
 * one (the reference's default false would silently unlock, and cannot unset a secret anyway).
 */
const UpdateBody = Type.Object(
  {
    key: Type.Optional(Type.String({ minLength: 1 })),
    value: Type.String({ minLength: 1, maxLength: VARIABLE_VALUE_MAX }),
    locked: Type.Optional(Type.Boolean()),
    secret: Type.Optional(Type.Boolean()),
  },
  { additionalProperties: false },
);

/** EnvironmentVariablesV1ReadResponse / MutationResponse: the value is null when secret. */
const VariableResponse = Type.Object({
  key: Type.String(),
  value: Nullable(Type.String()),
  locked: Type.Boolean(),
  secret: Type.Boolean(),
});

const KeyParams = Type.Object({ key: Type.String({ minLength: 1 }) });
const ListQuery = Type.Object({
  ...PageNumberQuery(),
});

const variableNotFound = () => new NotFoundError('Environment variable not found');

export function variableView(v: AccountVariable): Static<typeof VariableResponse> {
  return { key: v.key, value: v.secret ? SECRET_VALUE_IN_RESPONSES : v.value, locked: v.locked, secret: v.secret };
}

export const variableRoutes: FastifyPluginAsync<{ store: Store }> = async (fastify, { store }) => {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();

  app.get(
    '/v1/variables',
    { schema: { querystring: ListQuery, response: { 200: Type.Array(VariableResponse), ...commonErrors } } },
    async (request) => {
      const { limit, page } = request.query;
      return (await store.variables.list(request.account.id, { limit, page })).map(variableView);
    },
  );

  app.post(
    '/v1/variables',
    { schema: { body: CreateBody, response: { 201: VariableResponse, 409: ApiErrorSchema, ...commonErrors } } },
    async (request, reply) => {
      const created = await store.variables.create(request.account.id, request.body);
      if (!created)
        throw new ConflictError(`body/key: an environment variable with key "${request.body.key}" exists already`);
      return reply.status(201).send(variableView(created));
    },
  );

  app.get(
    '/v1/variables/:key',
    { schema: { params: KeyParams, response: { 200: VariableResponse, ...commonErrors } } },
    async (request) => {
      const found = await store.variables.get(request.account.id, request.params.key);
      if (!found) throw variableNotFound();
      return variableView(found);
    },
  );

  app.put(
    '/v1/variables/:key',
    { schema: { params: KeyParams, body: UpdateBody, response: { 200: VariableResponse, ...commonErrors } } },
    async (request) => {
      const { key } = request.params;
      const existing = await store.variables.get(request.account.id, key);
      if (!existing) throw variableNotFound();
      const body = request.body;
      if (body.key !== undefined && body.key !== key) {
        throw new BadRequestError(
          `body/key: the key of a variable cannot be changed (it is "${key}"); create a new variable instead`,
        );
      }
      if (existing.secret && body.secret === false) {
        throw new BadRequestError(
          `body/secret: "${key}" is secret and cannot be made non-secret; delete it and create it again`,
        );
      }
      const updated = await store.variables.update(request.account.id, key, {
        value: body.value,
        locked: body.locked ?? existing.locked,
        secret: existing.secret || body.secret === true,
      });
      if (!updated) throw variableNotFound();
      return variableView(updated);
    },
  );

  app.delete(
    '/v1/variables/:key',
    { schema: { params: KeyParams, response: { 204: NoContent, ...commonErrors } } },
    async (request, reply) => {
      if (!(await store.variables.delete(request.account.id, request.params.key))) throw variableNotFound();
      return reply.status(204).send(null);
    },
  );
};
