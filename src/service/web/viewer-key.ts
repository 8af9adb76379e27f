/**
 * The key of a private status page or dashboard, as its reader carries it: offered once as `?key=`,
 * then kept in an HttpOnly, SameSite=Lax cookie scoped to the page's path, so links keep working and the
 * key leaves the address bar at once. One rule for both kinds of page.
 */
import { parseCookie, stringifySetCookie } from 'cookie';
import type { FastifyRequest } from 'fastify';

/** The key offered in the query, if any (an empty `?key=` offers none). */
export function keyInQuery(request: FastifyRequest): string | undefined {
  const offered = (request.query as { key?: unknown } | undefined)?.key;
  return typeof offered === 'string' && offered !== '' ? offered : undefined;
}

// The cookie codec itself rather than @fastify/cookie's request decorators: `GET /` of a custom domain
// is answered outside any plugin that would register them.
/** The key kept in the cookie `name`, if any. */
export function keptKey(request: FastifyRequest, name: string): string | undefined {
  const header = request.headers.cookie;
  return header ? parseCookie(header)[name] : undefined;
}

export interface KeyCookie {
  name: string;
  key: string;
  path: string;
  /** Seconds; a session cookie without it. */
  maxAge?: number;
}

/** The Set-Cookie value that keeps an accepted key; Secure when the request or PUBLIC_URL is https. */
export function keyCookie(request: FastifyRequest, publicUrl: URL, cookie: KeyCookie): string {
  return stringifySetCookie({
    name: cookie.name,
    value: cookie.key,
    path: cookie.path,
    httpOnly: true,
    sameSite: 'lax',
    secure: request.protocol === 'https' || publicUrl.protocol === 'https:',
    ...(cookie.maxAge === undefined ? {} : { maxAge: cookie.maxAge }),
  });
}
