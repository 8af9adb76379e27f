/** The status page itself: overall state, open incidents, then the cards with each service's state and 90 days. */
import type { FastifyReply } from 'fastify';
import type { IncidentRecord, IncidentSeverity, StatusPage } from '../../store/status-pages-types.ts';
import type { WebDeps } from '../deps.ts';
import { html } from '../html.ts';
import { precompressedBody } from '../precompressed.ts';
import { RenderCache } from '../render-cache.ts';
import { dayBarWriter } from './bar.ts';
import { incidentCard } from './incident-view.ts';
import type { OpenStatusPage } from './resolve.ts';
import { renderStatusView, sendStatusHtml } from './shell.ts';
import { historyByService, historyStart, severityState, worstSeverity } from './state.ts';

/** At most this many open incidents are shown in full; the history page has the rest. */
export const OPEN_INCIDENTS_SHOWN = 20;

export const pageScope = (page: StatusPage) => ({
  accountId: page.accountId,
  serviceIds: [...new Set(page.cards.flatMap((c) => c.services.map((s) => s.id)))],
});

function serviceRow(service: { id: string; name: string }, severity: IncidentSeverity | undefined, bar: string) {
  const state = severityState(severity);
  return html`<li class="sp-service">
    <div class="sp-service-head">
      <span class="sp-service-name">${service.name}</span>
      <span class=${`state state-${state.tone}`}>${state.label}</span>
    </div>
    <ol class="sp-bar" aria-label=${`${service.name}, last 90 days`} dangerouslySetInnerHTML=${{ __html: bar }}></ol>
  </li>`;
}

function overall(open: Map<string, IncidentSeverity>) {
  const worst = worstSeverity(open.values());
  const state = severityState(worst);
  const text = worst ? `Some systems are affected: ${state.label.toLowerCase()}` : 'All systems operational';
  return html`<p class=${`card sp-overall sp-overall-${state.tone}`}><span class=${`state state-${state.tone}`}>${text}</span></p>`;
}

/**
 * Rendered pages, one per page and address form, kept until anything they show changes: the version
 * holds the account's status page version (moved by the store on every write to pages, services,
 * incidents and updates, whichever replica made it), the page's own last change and the UTC day (the
 * 90-day bars move at midnight). Rendering reads and writes thousands of day cells; a reader's visit
 * should not.
 */
const rendered = new RenderCache({ maxBytes: 64 * 1024 * 1024 });

export async function sendStatusPage(deps: WebDeps, reply: FastifyReply, found: OpenStatusPage): Promise<FastifyReply> {
  const now = new Date();
  const accountVersion = await deps.store.statusPageReads.version(found.page.accountId);
  const version = [found.page.updatedAt ?? found.page.createdAt, accountVersion, now.toISOString().slice(0, 10)].join(
    '|',
  );
  const page = await rendered.get(`${found.page.id}|${found.base}`, version, () => renderStatusPage(deps, found, now));
  return sendStatusHtml(reply, found, precompressedBody(reply, page));
}

async function renderStatusPage(deps: WebDeps, found: OpenStatusPage, now: Date): Promise<string> {
  const { page, base } = found;
  const scope = pageScope(page);
  const [open, severities, started] = await Promise.all([
    deps.store.statusPageReads.openIncidents(scope, OPEN_INCIDENTS_SHOWN),
    deps.store.statusPageReads.openSeverities(scope),
    deps.store.statusPageReads.startedSince(scope, historyStart(now)),
  ]);
  const history = historyByService(now, scope.serviceIds, started);
  const writeBar = dayBarWriter(base);
  return renderStatusView(found, {
    title: page.name,
    children: html`<h1>${page.name}</h1>
      ${page.description ? html`<p class="sp-description">${page.description}</p>` : null}
      ${overall(severities)} ${openIncidents(open, base)}
      ${page.cards.map(
        (card) => html`<section class="card sp-card" aria-labelledby=${`card-${card.id}`}>
          <h2 id=${`card-${card.id}`}>${card.name}</h2>
          <ul class="sp-services">
            ${card.services.map((s) => serviceRow(s, severities.get(s.id), writeBar(history.get(s.id) ?? [])))}
          </ul>
        </section>`,
      )}
      <p class="muted sp-legend">Each bar shows the last 90 days, oldest first; a coloured day had incidents (its text says which).</p>`,
  });
}

function openIncidents(open: IncidentRecord[], base: string) {
  if (open.length === 0) return null;
  return html`<section aria-labelledby="open-incidents">
    <h2 id="open-incidents">Open incidents</h2>
    ${open.map((incident) => incidentCard(incident, base))}
  </section>`;
}
