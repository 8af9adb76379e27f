/** One incident's own page, at a stable URL: `<base>incidents/<id>`. Another page's incident is the 404 page. */
import type { FastifyReply } from 'fastify';
import type { WebDeps } from '../deps.ts';
import { html } from '../html.ts';
import { sendNotFoundPage } from '../not-found.ts';
import { incidentFacts, incidentUpdates } from './incident-view.ts';
import { pageScope } from './page.ts';
import type { OpenStatusPage } from './resolve.ts';
import { sendStatusView } from './shell.ts';

export async function sendIncidentPage(
  deps: WebDeps,
  reply: FastifyReply,
  found: OpenStatusPage,
  incidentId: string,
): Promise<FastifyReply> {
  const incident = await deps.store.statusPageReads.incident(pageScope(found.page), incidentId);
  if (!incident) return sendNotFoundPage(reply, 'incident');
  return sendStatusView(reply, found, {
    title: incident.name,
    children: html`<p><a href=${found.base}>← ${found.page.name}</a></p>
      <article class="sp-incident">
        <h1>${incident.name}</h1>
        ${incidentFacts(incident)}
        <h2>Updates</h2>
        ${incidentUpdates(incident)}
      </article>`,
  });
}
