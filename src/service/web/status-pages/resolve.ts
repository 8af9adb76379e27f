/**
 * Which status page a request addresses, and whether its reader may see it. A page is addressed by
 * its url (`/status/<url>/…`, the route's `url` parameter) or, on any other path, by the Host header
 * matching its customDomain. A private page opens with one of its keys: passed once as `?key=`, it is
 * checked, kept in an HttpOnly cookie scoped to the page's path, and the address loses the key (a
 * redirect), so links keep working and the key does not linger in the address bar or in Referer.
 * A feed reader keeps no cookies: the feed answers a good `?key=` itself (`keyInQuery: 'serve'`).
 * Unknown pages and private pages without a valid key get the same plain 404 page: it reveals nothing.
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { StatusPage } from '../../store/status-pages-types.ts';
import type { WebDeps } from '../deps.ts';
import { requestHost } from '../host.ts';
import { sendNotFoundPage } from '../not-found.ts';
import { keptKey, keyCookie, keyInQuery } from '../viewer-key.ts';

/** The cookie that carries a private page's key; its path scopes it to that page. */
export const KEY_COOKIE = 'outpost_status_key';

export interface OpenStatusPage {
  page: StatusPage;
  /** The page's own path, ending in '/': `/status/<url>/`, or `/` on its custom domain. Sub-pages are relative to it. */
  base: string;
  viaDomain: boolean;
}

/** The page's own path without the trailing slash: `/status/<url>`, or `/` on its custom domain. */
export function pagePath(found: OpenStatusPage): string {
  return found.base.slice(0, -1) || '/';
}

export type StatusPageLookup =
  | { kind: 'open'; found: OpenStatusPage }
  /** Answered already (a redirect after a good `?key=`). */
  | { kind: 'sent' }
  | { kind: 'locked' }
  | { kind: 'none' };

function addressOf(request: FastifyRequest): { kind: 'url' | 'customDomain'; value: string } {
  const url = (request.params as { url?: string } | undefined)?.url;
  return url === undefined ? { kind: 'customDomain', value: requestHost(request) } : { kind: 'url', value: url };
}

function withoutKey(request: FastifyRequest): string {
  const url = new URL(request.url, 'http://page.invalid');
  url.searchParams.delete('key');
  return `${url.pathname}${url.search}`;
}

export interface LookupOptions {
  /** What a good `?key=` leads to: a redirect to the address without it (pages), or the answer itself (the feed). */
  keyInQuery?: 'redirect' | 'serve';
}

/** Looks the page up and checks its key; answers only for a good `?key=` (the redirect that drops it). */
export async function lookUpStatusPage(
  deps: WebDeps,
  request: FastifyRequest,
  reply: FastifyReply,
  opts: LookupOptions = {},
): Promise<StatusPageLookup> {
  const address = addressOf(request);
  if (address.value === '') return { kind: 'none' };
  const page = await deps.store.statusPageReads.findByAddress(address.kind, address.value);
  if (!page) return { kind: 'none' };
  const viaDomain = address.kind === 'customDomain';
  const found: OpenStatusPage = { page, viaDomain, base: viaDomain ? '/' : `/status/${encodeURIComponent(page.url)}/` };
  if (!page.isPrivate) return { kind: 'open', found };
  const offered = keyInQuery(request);
  if (offered !== undefined) {
    if (!(await deps.store.statusPageKeys.opens(page.id, offered))) return { kind: 'locked' };
    reply.header(
      'set-cookie',
      keyCookie(request, deps.config.publicUrl, { name: KEY_COOKIE, key: offered, path: pagePath(found) }),
    );
    if (opts.keyInQuery === 'serve') return { kind: 'open', found };
    await reply.redirect(withoutKey(request), 303);
    return { kind: 'sent' };
  }
  const kept = keptKey(request, KEY_COOKIE);
  if (kept && (await deps.store.statusPageKeys.opens(page.id, kept))) return { kind: 'open', found };
  return { kind: 'locked' };
}

/**
 * The status page a request addresses, when its reader may see it. Otherwise the answer is sent (the
 * plain 404 page, or the redirect after a good key) and the result is undefined: return the reply.
 */
export async function resolveStatusPage(
  deps: WebDeps,
  request: FastifyRequest,
  reply: FastifyReply,
  opts: LookupOptions = {},
): Promise<OpenStatusPage | undefined> {
  const lookup = await lookUpStatusPage(deps, request, reply, opts);
  if (lookup.kind === 'open') return lookup.found;
  if (lookup.kind !== 'sent') sendNotFoundPage(reply);
  return undefined;
}
