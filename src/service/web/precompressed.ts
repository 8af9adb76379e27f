/**
 * A rendered page kept for reuse, with its gzip made once: for a cached page, compressing hundreds of
 * kilobytes on every visit would cost more than everything else the visit does.
 */
import { gzipSync } from 'node:zlib';
import type { FastifyReply } from 'fastify';

export interface RenderedPage {
  html: string;
  /** Made on the first visit that accepts gzip. */
  gzip?: Buffer;
}

/** Whether the client takes gzip (and has not refused it with q=0). */
export function acceptsGzip(header: string | string[] | undefined): boolean {
  return /\bgzip\b(?!\s*;\s*q\s*=\s*0(?:\.0*)?\b)/i.test(String(header ?? ''));
}

/** The body to send for `page`: its gzip (with the header saying so) when the request takes it. */
export function precompressedBody(reply: FastifyReply, page: RenderedPage): string | Buffer {
  reply.header('vary', 'accept-encoding');
  if (!acceptsGzip(reply.request.headers['accept-encoding'])) return page.html;
  // Level 3: a status page of 50 services compresses in half the time of the default level 6 and
  // comes out about a tenth larger; it is compressed on the visit after each change.
  page.gzip ??= gzipSync(page.html, { level: 3 });
  reply.header('content-encoding', 'gzip');
  return page.gzip;
}

/** LRU bookkeeping: a page's size in the cache, its text and (up to) its gzip. */
export function renderedSize(page: RenderedPage): number {
  return Math.ceil(page.html.length * 1.2) || 1;
}
