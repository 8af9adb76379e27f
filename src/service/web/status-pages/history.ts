/**
 * The incident history: every incident of the page's services, newest started first, a page at a time.
 * `?before=` is the opaque cursor of the "Older incidents" link (no OFFSET: a page costs the same deep
 * in the history as at its top).
 */
import type { FastifyReply } from 'fastify';
import { BadRequestError } from '../../http/errors.ts';
import type { WebDeps } from '../deps.ts';
import { html } from '../html.ts';
import { renderPage } from '../layout.ts';
import { setPageHeaders } from '../page-headers.ts';
import { incidentFacts, incidentPath } from './incident-view.ts';
import { pageScope } from './page.ts';
import type { OpenStatusPage } from './resolve.ts';
import { sendStatusView } from './shell.ts';

export const HISTORY_PAGE_SIZE = 20;

function sendBadCursor(reply: FastifyReply, message: string): FastifyReply {
  const body = renderPage({
    title: 'Bad request',
    bodyClass: 'not-found',
    children: html`<main id="main" class="narrow"><h1>Bad request</h1><p>${message}</p></main>`,
  });
  return setPageHeaders(reply.status(400)).send(body);
}

export async function sendHistoryPage(
  deps: WebDeps,
  reply: FastifyReply,
  found: OpenStatusPage,
  before: string | undefined,
): Promise<FastifyReply> {
  const { base } = found;
  let page: Awaited<ReturnType<typeof deps.store.statusPageReads.history>>;
  try {
    page = await deps.store.statusPageReads.history(pageScope(found.page), {
      limit: HISTORY_PAGE_SIZE,
      nextId: before,
    });
  } catch (err) {
    if (err instanceof BadRequestError) return sendBadCursor(reply, err.message);
    throw err;
  }
  return sendStatusView(reply, found, {
    title: 'Incident history',
    children: html`<h1>Incident history</h1>
      ${page.entries.length === 0 ? html`<p>No incidents${before ? ' before these' : ''}.</p>` : null}
      <ol class="sp-history">
        ${page.entries.map(
          (incident) => html`<li class="card">
            <h2><a href=${incidentPath(base, incident)}>${incident.name}</a></h2>
            ${incidentFacts(incident)}
          </li>`,
        )}
      </ol>
      <nav class="sp-paging" aria-label="History pages">
        ${before ? html`<a href=${`${base}history`}>Newest incidents</a>` : null}
        ${page.nextId ? html`<a href=${`${base}history?before=${encodeURIComponent(page.nextId)}`}>Older incidents</a>` : null}
      </nav>`,
  });
}
