/**
 * Public dashboards: `/dashboards/<customUrl>` with its live region and custom stylesheet, and the
 * same parts under `/-/dashboard/` of a dashboard's custom domain (its page there is `/`, see
 * ./at-domain.ts). Unknown addresses answer the plain 404 page.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { WebDeps } from '../deps.ts';
import { requestHost } from '../host.ts';
import { sendNotFoundPage } from '../not-found.ts';
import { DOMAIN_PARTS, dashboardAtHost, dashboardAtUrl, type LocatedDashboard } from './locate.ts';
import { sendCustomCss, sendDashboardPage, sendDashboardRegion } from './serve.ts';

type Sender = (
  deps: WebDeps,
  request: FastifyRequest,
  reply: FastifyReply,
  located: LocatedDashboard,
) => Promise<FastifyReply>;

/**
 * The page at its address as stored (lower case): its viewer-key cookie is scoped to that path, and
 * cookie paths are case-sensitive, so `/dashboards/ACME` is sent to `/dashboards/acme` first.
 */
const canonicalPage: Sender = async (deps, request, reply, located) => {
  const path = request.url.split('?')[0] ?? '';
  if (path === located.page) return sendDashboardPage(deps, request, reply, located);
  const query = request.url.slice(path.length);
  return reply.redirect(`${located.page}${query}`, 301);
};

type UrlRequest = FastifyRequest<{ Params: { customUrl: string } }>;

export async function dashboardPages(app: FastifyInstance, deps: WebDeps): Promise<void> {
  const atUrl = (send: Sender) => async (request: UrlRequest, reply: FastifyReply) => {
    const located = await dashboardAtUrl(deps.store, request.params.customUrl);
    return located ? send(deps, request, reply, located) : sendNotFoundPage(reply, 'dashboard');
  };
  const atHost = (send: Sender) => async (request: FastifyRequest, reply: FastifyReply) => {
    const located = await dashboardAtHost(deps.store, requestHost(request));
    return located ? send(deps, request, reply, located) : sendNotFoundPage(reply, 'dashboard');
  };
  app.get('/dashboards/:customUrl', atUrl(canonicalPage));
  app.get('/dashboards/:customUrl/region', atUrl(sendDashboardRegion));
  app.get('/dashboards/:customUrl/custom.css', atUrl(sendCustomCss));
  app.get(`${DOMAIN_PARTS}/region`, atHost(sendDashboardRegion));
  app.get(`${DOMAIN_PARTS}/custom.css`, atHost(sendCustomCss));
}
