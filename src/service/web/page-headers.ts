/**
 * The headers every HTML page of the service carries. The Content-Security-Policy allows scripts,
 * styles and connections from the service only, so a user-supplied string that slipped through
 * escaping, or a dashboard's custom CSS, can load nothing from elsewhere; images may also be https
 * URLs because status page and dashboard logos are URLs their owners give.
 */
import type { FastifyReply } from 'fastify';

export interface PagePolicy {
  /** Extra sources for img-src (a console result page serves screenshots from the service: 'self' covers it). */
  imgSrc?: string[];
  /** Extra sources for script-src: hashes of inline scripts a page cannot do without (the trace viewer's). */
  scriptSrc?: string[];
  /** Extra directives as written, for a page with special needs (the trace viewer). */
  extra?: string[];
}

export function contentSecurityPolicy(policy: PagePolicy = {}): string {
  const img = ["'self'", 'data:', 'https:', ...(policy.imgSrc ?? [])].join(' ');
  return [
    "default-src 'none'",
    ["script-src 'self'", ...(policy.scriptSrc ?? [])].join(' '),
    "style-src 'self'",
    `img-src ${img}`,
    "font-src 'self'",
    "connect-src 'self'",
    "media-src 'self'",
    "form-action 'self'",
    "frame-ancestors 'none'",
    "base-uri 'none'",
    ...(policy.extra ?? []),
  ].join('; ');
}

/** Sets the page's type, its security headers and a cache policy (public pages: a short one). */
export function setPageHeaders(
  reply: FastifyReply,
  opts: { cacheSeconds?: number; policy?: PagePolicy } = {},
): FastifyReply {
  return reply
    .type('text/html; charset=utf-8')
    .header('content-security-policy', contentSecurityPolicy(opts.policy))
    .header('x-content-type-options', 'nosniff')
    .header('referrer-policy', 'same-origin')
    .header('x-frame-options', 'DENY')
    .header('cache-control', opts.cacheSeconds ? `public, max-age=${opts.cacheSeconds}` : 'no-store');
}
