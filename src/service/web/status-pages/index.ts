/**
 * The public status pages' routes: each view at `/status/<url>/…` and, on a page's custom domain, at
 * the same path from `/` (on any other host those root paths are the 404 page). Every view goes
 * through resolveStatusPage first: unknown, other-host and locked pages never reach a view.
 */
import type { FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify';
import type { WebDeps } from '../deps.ts';
import { sendFeed } from './feed.ts';
import { sendHistoryPage } from './history.ts';
import { sendIncidentPage } from './incident-page.ts';
import { sendStatusPage } from './page.ts';
import { type OpenStatusPage, resolveStatusPage } from './resolve.ts';
import { sendThemeStylesheet } from './theme-css.ts';

type View = (
  deps: WebDeps,
  request: FastifyRequest,
  reply: FastifyReply,
  found: OpenStatusPage,
) => Promise<FastifyReply> | FastifyReply;

const VIEWS: Record<string, View> = {
  '': (deps, _request, reply, found) => sendStatusPage(deps, reply, found),
  'incidents/:incidentId': (deps, request, reply, found) =>
    sendIncidentPage(deps, reply, found, (request.params as { incidentId: string }).incidentId),
  history: (deps, request, reply, found) => {
    const before = (request.query as { before?: unknown }).before;
    return sendHistoryPage(deps, reply, found, typeof before === 'string' && before !== '' ? before : undefined);
  },
  'feed.atom': (deps, request, reply, found) => sendFeed(deps, request, reply, found),
  'theme.css': (_deps, _request, reply, found) => sendThemeStylesheet(reply, found),
};

export const statusPageWebRoutes: FastifyPluginAsync<WebDeps> = async (app, deps) => {
  for (const [path, view] of Object.entries(VIEWS)) {
    const opts = { keyInQuery: path === 'feed.atom' ? ('serve' as const) : ('redirect' as const) };
    const handler = async (request: FastifyRequest, reply: FastifyReply) => {
      const found = await resolveStatusPage(deps, request, reply, opts);
      return found ? view(deps, request, reply, found) : reply;
    };
    app.get(`/status/:url/${path}`, handler);
    // The page itself is also at /status/<url>; its links are relative to /status/<url>/ all the same.
    if (path === '') app.get('/status/:url', handler);
    // On a custom domain the page is at `/`, which index.ts's `GET /` routes through at-domain.ts.
    else app.get(`/${path}`, handler);
  }
};
