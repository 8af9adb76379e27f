/**
 * Live updates: a page marks an element with `data-live-src` (a URL under /app answering the
 * element's new content as an HTML fragment) and `data-live-seconds`; assets/console.js polls it
 * while the page is visible. Why polling rather than server-sent events: docs/architecture.md,
 * "Web pages".
 */
import type { FastifyReply } from 'fastify';
import { Fragment, type ComponentChildren } from 'preact';
import { html, renderFragment } from '../html.ts';
import { setPageHeaders } from '../page-headers.ts';

export const LIVE_SECONDS = 5;

/** Sends `children` as the new content of a live element. */
export function sendLiveContent(reply: FastifyReply, children: ComponentChildren): FastifyReply {
  return setPageHeaders(reply).send(renderFragment(html`<${Fragment}>${children}</${Fragment}>`));
}
