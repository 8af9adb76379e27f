/**
 * Status pages (/v1/status-pages): a page shows cards, each listing services. The list embeds each
 * page's unresolved incidents; keys appear only masked (they are made in ./status-page-keys.ts).
 */
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyPluginAsync } from 'fastify';
import { type Static, Type } from 'typebox';
import { NotFoundError } from '../http/errors.ts';
import type { StatusPageInput } from '../store/status-pages-types.ts';
import type { Store } from '../store/store.ts';
import { assertOptionalHttpUrl } from './http-url.ts';
import { ApiErrorSchema, commonErrors, NoContent } from './schemas.ts';
import {
  PageQuery,
  StatusPageBody,
  StatusPagesPage,
  StatusPageWithIdSchema,
  statusPageReadView,
  statusPageWithIdView,
} from './status-page-schemas.ts';

const Params = Type.Object({ statusPageId: Type.String({ minLength: 1 }) });

const notFound = () => new NotFoundError('Status page not found');

/** The page's links and images are fetched or followed by browsers: http(s) URLs only, no placeholders. */
function assertPageLinks(body: Static<typeof StatusPageBody>): void {
  for (const field of ['logo', 'logoDark', 'favicon', 'redirectTo'] as const) {
    assertOptionalHttpUrl(`body/${field}`, body[field], { placeholders: false });
  }
}

/** Left-out optional properties take their reference defaults (null, AUTO): PUT replaces the page. */
function toInput(body: Static<typeof StatusPageBody>): StatusPageInput {
  return {
    name: body.name,
    url: body.url,
    customDomain: body.customDomain ?? null,
    themeColors: body.themeColors ?? null,
    logo: body.logo ?? null,
    logoDark: body.logoDark ?? null,
    redirectTo: body.redirectTo ?? null,
    favicon: body.favicon ?? null,
    defaultTheme: body.defaultTheme ?? 'AUTO',
    version: body.version ?? null,
    description: body.description ?? null,
    isPrivate: body.isPrivate ?? false,
    whiteLabel: body.whiteLabel ?? false,
    cards: body.cards.map((card) => ({
      ...(card.id === undefined ? {} : { id: card.id }),
      name: card.name,
      serviceIds: (card.services ?? []).map((s) => s.id),
    })),
  };
}

export const statusPageRoutes: FastifyPluginAsync<{ store: Store }> = async (fastify, { store }) => {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();

  app.get(
    '/v1/status-pages',
    { schema: { querystring: PageQuery, response: { 200: StatusPagesPage, ...commonErrors } } },
    async (request) => {
      const accountId = request.account.id;
      const page = await store.statusPages.list(accountId, request.query);
      const incidents = await store.incidents.listUnresolvedByStatusPage(
        accountId,
        page.entries.map((p) => p.id),
      );
      return {
        length: page.entries.length,
        entries: await Promise.all(
          page.entries.map(async (p) =>
            statusPageReadView(p, incidents.get(p.id) ?? [], (await store.statusPageKeys.list(accountId, p.id)) ?? []),
          ),
        ),
        nextId: page.nextId,
      };
    },
  );

  app.post(
    '/v1/status-pages',
    {
      schema: { body: StatusPageBody, response: { 201: StatusPageWithIdSchema, 409: ApiErrorSchema, ...commonErrors } },
    },
    async (request, reply) => {
      assertPageLinks(request.body);
      const page = await store.statusPages.create(request.account.id, toInput(request.body));
      return reply.status(201).send(statusPageWithIdView(page));
    },
  );

  app.get(
    '/v1/status-pages/:statusPageId',
    { schema: { params: Params, response: { 200: StatusPageWithIdSchema, ...commonErrors } } },
    async (request) => {
      const page = await store.statusPages.get(request.account.id, request.params.statusPageId);
      if (!page) throw notFound();
      return statusPageWithIdView(page);
    },
  );

  app.put(
    '/v1/status-pages/:statusPageId',
    {
      schema: {
        params: Params,
        body: StatusPageBody,
        response: { 200: StatusPageWithIdSchema, 409: ApiErrorSchema, ...commonErrors },
      },
    },
    async (request) => {
      assertPageLinks(request.body);
      const page = await store.statusPages.update(
        request.account.id,
        request.params.statusPageId,
        toInput(request.body),
      );
      if (!page) throw notFound();
      return statusPageWithIdView(page);
    },
  );

  app.delete(
    '/v1/status-pages/:statusPageId',
    { schema: { params: Params, response: { 204: NoContent, ...commonErrors } } },
    async (request, reply) => {
      if (!(await store.statusPages.delete(request.account.id, request.params.statusPageId))) throw notFound();
      return reply.status(204).send(null);
    },
  );
};
