/**
 * The page's incidents as an Atom feed (RFC 4287): the newest started first, each entry linking to the
 * incident's own page, its summary the newest update. Links are absolute, as feed readers need, on the
 * origin the feed was fetched from (the service's own address, or the page's custom domain).
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { IncidentRecord } from '../../store/status-pages-types.ts';
import type { WebDeps } from '../deps.ts';
import { escapeMarkup } from './escape.ts';
import { incidentPath, startOf } from './incident-view.ts';
import { pageScope } from './page.ts';
import type { OpenStatusPage } from './resolve.ts';
import { severityState, statusWord } from './state.ts';

export const FEED_ENTRIES = 50;

function origin(request: FastifyRequest, found: OpenStatusPage): string {
  return `${request.protocol}://${request.headers.host ?? found.page.customDomain ?? 'localhost'}`;
}

const updatedOf = (incident: IncidentRecord): string =>
  new Date(incident.updates[0]?.publicIncidentUpdateDate ?? incident.updatedAt ?? incident.createdAt).toISOString();

function entry(incident: IncidentRecord, pageUrl: string): string {
  const newest = incident.updates[0];
  const summary = `${statusWord(incident.lastUpdateStatus)} (${severityState(incident.severity).label})${newest ? `: ${newest.description}` : ''}`;
  return `  <entry>
    <id>urn:uuid:${escapeMarkup(incident.id)}</id>
    <title>${escapeMarkup(incident.name)}</title>
    <updated>${updatedOf(incident)}</updated>
    <published>${new Date(startOf(incident)).toISOString()}</published>
    <link rel="alternate" type="text/html" href="${escapeMarkup(incidentPath(pageUrl, incident))}"/>
    <summary>${escapeMarkup(summary)}</summary>
  </entry>
`;
}

export async function sendFeed(
  deps: WebDeps,
  request: FastifyRequest,
  reply: FastifyReply,
  found: OpenStatusPage,
): Promise<FastifyReply> {
  const { page, base } = found;
  const { entries } = await deps.store.statusPageReads.history(pageScope(page), { limit: FEED_ENTRIES });
  const pageUrl = origin(request, found) + base;
  const updated = entries.map(updatedOf).sort().at(-1) ?? new Date(page.updatedAt ?? page.createdAt).toISOString();
  const xml = `<?xml version="1.0" encoding="utf-8"?>
<feed xmlns="http://www.w3.org/2005/Atom">
  <id>urn:uuid:${escapeMarkup(page.id)}</id>
  <title>${escapeMarkup(`${page.name} incidents`)}</title>
  <updated>${updated}</updated>
  <author><name>${escapeMarkup(page.name)}</name></author>
  <link rel="self" type="application/atom+xml" href="${escapeMarkup(`${pageUrl}feed.atom`)}"/>
  <link rel="alternate" type="text/html" href="${escapeMarkup(pageUrl)}"/>
${entries.map((incident) => entry(incident, pageUrl)).join('')}</feed>
`;
  return reply
    .type('application/atom+xml; charset=utf-8')
    .header('x-content-type-options', 'nosniff')
    .header('cache-control', page.isPrivate ? 'no-store' : 'public, max-age=60')
    .send(xml);
}
