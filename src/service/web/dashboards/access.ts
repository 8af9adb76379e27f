/**
 * Private dashboards: the viewer key comes once as `?key=`, is checked, and is then kept in a cookie
 * (HttpOnly, SameSite=Lax, scoped to the dashboard's path) so the address bar and history lose it at
 * once (a redirect to the bare page) and the live region's requests carry it. Without a valid key
 * the page shows a key field and nothing of the dashboard.
 */
import type { FastifyRequest } from 'fastify';
import type { Store } from '../../store/store.ts';
import { keptKey, keyCookie, keyInQuery } from '../viewer-key.ts';
import type { LocatedDashboard } from './locate.ts';

export const VIEWER_COOKIE = 'outpost_dashboard_key';
const COOKIE_DAYS = 30;

export type Access = 'open' | 'key-accepted' | 'key-rejected' | 'key-required';

/** Whether the request may see the dashboard; `allowQueryKey` for the page (not its parts). */
export async function viewerAccess(
  store: Store,
  request: FastifyRequest,
  located: LocatedDashboard,
  allowQueryKey: boolean,
): Promise<Access> {
  const { dashboard } = located;
  if (dashboard.body.isPrivate !== true) return 'open';
  const queryKey = allowQueryKey ? keyInQuery(request) : undefined;
  if (queryKey !== undefined) {
    return (await store.dashboards.hasViewerKey(dashboard.id, queryKey)) ? 'key-accepted' : 'key-rejected';
  }
  const kept = keptKey(request, VIEWER_COOKIE);
  return kept && (await store.dashboards.hasViewerKey(dashboard.id, kept)) ? 'open' : 'key-required';
}

/** The Set-Cookie value that keeps an accepted key for this dashboard's path. */
export function viewerCookie(request: FastifyRequest, publicUrl: URL, located: LocatedDashboard, key: string): string {
  return keyCookie(request, publicUrl, {
    name: VIEWER_COOKIE,
    key,
    path: located.cookiePath,
    maxAge: COOKIE_DAYS * 86_400,
  });
}
