/**
 * Snippets (/v1/snippets): named Node.js code that API checks and groups run as setup or teardown by
 * id (setupSnippetId, tearDownSnippetId). The service puts a snippet's code into each job
 * (checks/user-code.ts), so an edit applies from the next run on. Deleting a snippet still in use is
 * allowed, as in the reference; the checks using it then fail with a message naming it.
 */
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyPluginAsync } from 'fastify';
import { type Static, Type } from 'typebox';
import { BadRequestError, NotFoundError } from '../http/errors.ts';
import type { Store } from '../store/store.ts';
import type { Snippet } from '../store/variables-types.ts';
import { commonErrors, IntegerId, NoContent, Nullable, PageNumberQuery } from './schemas.ts';

export const SNIPPET_SCRIPT_MAX = 100_000;

/** SnippetCreate (the reference uses it for PUT too). */
const SnippetBody = Type.Object(
  {
    name: Type.String({ minLength: 1, maxLength: 255 }),
    script: Type.String({ minLength: 1, maxLength: SNIPPET_SCRIPT_MAX }),
  },
  { additionalProperties: false },
);

const SnippetResponse = Type.Object({
  id: Type.Number(),
  name: Type.String(),
  script: Type.String(),
  created_at: Type.String({ format: 'date-time' }),
  updated_at: Nullable(Type.String({ format: 'date-time' })),
});

const SnippetIdParams = Type.Object({ id: IntegerId() });
const ListQuery = Type.Object({
  ...PageNumberQuery(),
});

const snippetNotFound = () => new NotFoundError('Snippet not found');

function snippetView(s: Snippet): Static<typeof SnippetResponse> {
  return { id: s.id, name: s.name, script: s.script, created_at: s.createdAt, updated_at: s.updatedAt };
}

/**
 * A setupSnippetId/tearDownSnippetId must name a snippet of the account: anything else (none, or
 * another account's, which reads the same) is a 400 naming the field. null and undefined pass.
 */
async function assertOwnSnippet(store: Store, accountId: string, field: string, id: unknown): Promise<void> {
  if (id === null || id === undefined) return;
  const found = typeof id === 'number' && Number.isInteger(id) ? await store.snippets.get(accountId, id) : undefined;
  if (!found) throw new BadRequestError(`${field}: no snippet with id ${JSON.stringify(id)} in this account`);
}

/** Both snippet fields of a check's or a check group's body, as assertOwnSnippet checks each. */
export async function assertOwnSnippets(
  store: Store,
  accountId: string,
  body: Readonly<Record<string, unknown>>,
): Promise<void> {
  await assertOwnSnippet(store, accountId, 'body/setupSnippetId', body.setupSnippetId);
  await assertOwnSnippet(store, accountId, 'body/tearDownSnippetId', body.tearDownSnippetId);
}

export const snippetRoutes: FastifyPluginAsync<{ store: Store }> = async (fastify, { store }) => {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();

  app.get(
    '/v1/snippets',
    { schema: { querystring: ListQuery, response: { 200: Type.Array(SnippetResponse), ...commonErrors } } },
    async (request) => (await store.snippets.list(request.account.id, request.query)).map(snippetView),
  );

  app.post(
    '/v1/snippets',
    { schema: { body: SnippetBody, response: { 201: SnippetResponse, ...commonErrors } } },
    async (request, reply) => {
      return reply.status(201).send(snippetView(await store.snippets.create(request.account.id, request.body)));
    },
  );

  app.get(
    '/v1/snippets/:id',
    { schema: { params: SnippetIdParams, response: { 200: SnippetResponse, ...commonErrors } } },
    async (request) => {
      const found = await store.snippets.get(request.account.id, request.params.id);
      if (!found) throw snippetNotFound();
      return snippetView(found);
    },
  );

  app.put(
    '/v1/snippets/:id',
    { schema: { params: SnippetIdParams, body: SnippetBody, response: { 200: SnippetResponse, ...commonErrors } } },
    async (request) => {
      const updated = await store.snippets.update(request.account.id, request.params.id, request.body);
      if (!updated) throw snippetNotFound();
      return snippetView(updated);
    },
  );

  app.delete(
    '/v1/snippets/:id',
    { schema: { params: SnippetIdParams, response: { 204: NoContent, ...commonErrors } } },
    async (request, reply) => {
      if (!(await store.snippets.delete(request.account.id, request.params.id))) throw snippetNotFound();
      return reply.status(204).send(null);
    },
  );
};
