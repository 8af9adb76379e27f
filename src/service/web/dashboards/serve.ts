/**
 * The three answers of a located dashboard: its page, its live region (the fragment the page's
 * script swaps in) and its custom stylesheet. Each checks the viewer key first when it is private.
 */
import { createHash } from 'node:crypto';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { assetUrl } from '../assets.ts';
import type { WebDeps } from '../deps.ts';
import { html, renderFragment } from '../html.ts';
import { renderPage } from '../layout.ts';
import { setPageHeaders } from '../page-headers.ts';
import { precompressedBody, type RenderedPage } from '../precompressed.ts';
import { RenderCache } from '../render-cache.ts';
import { keyInQuery } from '../viewer-key.ts';
import { viewerAccess, viewerCookie } from './access.ts';
import { servedCustomCss } from './custom-css.ts';
import { type DashboardData, loadDashboardData } from './data.ts';
import type { LocatedDashboard } from './locate.ts';
import { DashboardBodyView, DashboardRegion, type DashboardUrls, KeyRequiredView } from './view.ts';

type PageQuery = { page?: string };

/**
 * Rendered pages and regions, one per dashboard, address and page number, reused while nothing they
 * show has changed: the version holds the dashboard's own last change and the account's count of
 * results and statuses this process stored (store.dashboardChanges). What that count cannot see
 * (another replica's results, a renamed check) shows when an entry's few seconds are up; a viewer's
 * page is already as old as its refreshRate.
 */
const rendered = new RenderCache({ maxBytes: 64 * 1024 * 1024, ttlMs: 5_000 });

async function cachedRender(
  deps: WebDeps,
  request: FastifyRequest,
  located: LocatedDashboard,
  kind: 'page' | 'region',
  render: (data: DashboardData) => string,
): Promise<RenderedPage> {
  const { dashboard } = located;
  const page = requestedPage(request);
  const slot = [kind, dashboard.id, located.page, page].join('|');
  const version = `${dashboard.updatedAt ?? dashboard.createdAt}|${deps.store.dashboardChanges.of(dashboard.accountId)}`;
  return rendered.get(slot, version, async () =>
    render(await loadDashboardData(deps.store, dashboard, page, Date.now())),
  );
}

function requestedPage(request: FastifyRequest): number {
  return Number((request.query as PageQuery).page ?? 1);
}

/** Sanitized sheets by dashboard, kept until the dashboard changes. */
const sheets = new Map<number, { version: string; css: string; hash: string }>();

function customSheet(located: LocatedDashboard): { css: string; hash: string } {
  const { dashboard } = located;
  const version = dashboard.updatedAt ?? dashboard.createdAt;
  const cached = sheets.get(dashboard.id);
  if (cached?.version === version) return cached;
  const css = servedCustomCss(dashboard.body.customCSS as string | null | undefined);
  const entry = { version, css, hash: createHash('sha256').update(css).digest('hex').slice(0, 12) };
  sheets.set(dashboard.id, entry);
  return entry;
}

function urlsFor(deps: WebDeps, located: LocatedDashboard): DashboardUrls {
  const sheet = customSheet(located);
  return {
    page: located.page,
    region: `${located.parts}/region`,
    customCss: sheet.css ? `${located.parts}/custom.css?v=${sheet.hash}` : undefined,
    console: deps.config.publicUrl.origin,
  };
}

function sendKeyRequired(reply: FastifyReply, located: LocatedDashboard, wrongKey: boolean): FastifyReply {
  const body = renderPage({
    title: 'Private dashboard',
    bodyClass: 'dashboard-key',
    children: html`<${KeyRequiredView} action=${located.page} wrongKey=${wrongKey} />`,
  });
  return setPageHeaders(reply.status(401)).send(body);
}

export async function sendDashboardPage(
  deps: WebDeps,
  request: FastifyRequest,
  reply: FastifyReply,
  located: LocatedDashboard,
): Promise<FastifyReply> {
  const access = await viewerAccess(deps.store, request, located, true);
  if (access === 'key-accepted') {
    // Keep the key in the cookie, out of the address bar and history.
    const key = keyInQuery(request) ?? '';
    return reply
      .header('set-cookie', viewerCookie(request, deps.config.publicUrl, located, key))
      .redirect(located.page, 303);
  }
  if (access !== 'open') return sendKeyRequired(reply, located, access === 'key-rejected');
  const urls = urlsFor(deps, located);
  const page = await cachedRender(deps, request, located, 'page', (data) =>
    renderPage({
      title: data.body.header,
      description: data.body.description ?? undefined,
      favicon: data.body.favicon || undefined,
      bodyClass: 'dashboard',
      stylesheets: [assetUrl('dashboard.css'), ...(urls.customCss ? [urls.customCss] : [])],
      scripts: [assetUrl('dashboard.js')],
      refreshSeconds: data.body.refreshRate,
      children: html`<${DashboardBodyView} data=${data} urls=${urls} />`,
    }),
  );
  return setPageHeaders(reply).send(precompressedBody(reply, page));
}

export async function sendDashboardRegion(
  deps: WebDeps,
  request: FastifyRequest,
  reply: FastifyReply,
  located: LocatedDashboard,
): Promise<FastifyReply> {
  if ((await viewerAccess(deps.store, request, located, false)) !== 'open')
    return setPageHeaders(reply.status(401)).send('');
  const urls = urlsFor(deps, located);
  const region = await cachedRender(deps, request, located, 'region', (data) =>
    renderFragment(html`<${DashboardRegion} data=${data} urls=${urls} />`),
  );
  return setPageHeaders(reply).send(precompressedBody(reply, region));
}

export async function sendCustomCss(
  deps: WebDeps,
  request: FastifyRequest,
  reply: FastifyReply,
  located: LocatedDashboard,
): Promise<FastifyReply> {
  const open = (await viewerAccess(deps.store, request, located, false)) === 'open';
  return reply
    .status(open ? 200 : 401)
    .type('text/css; charset=utf-8')
    .header('x-content-type-options', 'nosniff')
    .header('cache-control', located.dashboard.body.isPrivate === true ? 'private, no-store' : 'public, max-age=300')
    .send(open ? customSheet(located).css : '');
}
