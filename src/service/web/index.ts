/**
 * The web: public status pages, public dashboards, badges' neighbours and the operator console, all
 * server-rendered by `outpost serve` from the same store as the API (docs/architecture.md, "Web pages").
 *
 * Everything registered here is encapsulated: compression and form bodies apply to the pages, not to
 * the API or the agent protocol.
 */
import compress from '@fastify/compress';
import formBody from '@fastify/formbody';
import type { FastifyInstance } from 'fastify';
import { assetRoutes } from './assets.ts';
import { consoleRoutes } from './console/index.ts';
import { dashboardAtDomain } from './dashboards/at-domain.ts';
import { dashboardPages } from './dashboards/routes.ts';
import type { WebDeps } from './deps.ts';
import { requestHost } from './host.ts';
import { sendNotFoundPage } from './not-found.ts';
import { statusPageAtDomain } from './status-pages/at-domain.ts';
import { subscribeRoutes } from './status-pages/subscribe.ts';
import { statusPageWebRoutes } from './status-pages/index.ts';

export type { WebDeps } from './deps.ts';

export async function webPages(app: FastifyInstance, deps: WebDeps): Promise<void> {
  // Pages are not API operations: keep them out of /openapi.json (and so out of the API contract tests).
  app.addHook('onRoute', (route) => {
    route.schema = { ...(route.schema ?? {}), hide: true };
  });
  await app.register(compress, { global: true, threshold: 1024 });
  await app.register(formBody);
  await app.register(assetRoutes);
  await app.register(subscribeRoutes, deps);
  await app.register(consoleRoutes, deps);
  await app.register(dashboardPages, deps);
  await app.register(statusPageWebRoutes, deps);
  app.get('/', async (request, reply) => {
    const host = requestHost(request);
    const served =
      (await statusPageAtDomain(deps, request, reply, host)) ?? (await dashboardAtDomain(deps, request, reply, host));
    if (served) return served;
    // The service's own address leads to the console; any other host names a domain nobody set up.
    if (host === deps.config.publicUrl.hostname.toLowerCase()) return reply.redirect('/app');
    return sendNotFoundPage(reply);
  });
}
