/** The plain 404 page of every web path: it names nothing that exists, for this account or another. */
import type { FastifyReply } from 'fastify';
import { html } from './html.ts';
import { renderPage } from './layout.ts';
import { setPageHeaders } from './page-headers.ts';

export function sendNotFoundPage(reply: FastifyReply, what = 'page'): FastifyReply {
  const body = renderPage({
    title: 'Not found',
    bodyClass: 'not-found',
    children: html`<main id="main" class="narrow">
      <h1>Not found</h1>
      <p>There is no ${what} at this address.</p>
    </main>`,
  });
  return setPageHeaders(reply.status(404)).send(body);
}

/** Whether a request that matched no route should get the HTML page rather than the API's JSON 404. */
export function wantsHtml(url: string, accept: string | undefined): boolean {
  if (url.startsWith('/v1/') || url.startsWith('/agent/')) return false;
  return (accept ?? '').includes('text/html');
}
