/**
 * The page's incidents as an Atom feed (RFC 4287): the newest started first, each entry linking to the
 * incident's own page, its summary the newest update. Links are absolute, as feed readers need, on the
 * origin the feed was fetched from (the service's own address, or the page's custom domain).
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { IncidentRecord } from '../../store/status-pages-types.ts';
import type { WebDeps } from '../deps.ts';
import { incidentPath, startOf } from './incident-view.ts';
import { pageScope } from './page.ts';
import type { OpenStatusPage } from './resolve.ts';
import { severityState, statusWord } from './state.ts';

export const FEED_ENTRIES = 50;

const XML_ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&apos;' };

/** Text and attribute values; characters XML 1.0 forbids are dropped. */
export function escapeXml(text: string): string {
  // biome-ignore lint/suspicious/noControlCharactersInRegex: the control characters XML 1.0 does not allow
  return text.replace(/[\u0000-\u0008\u000b\u000c\u000e-\u001f\ufffe\uffff]/g, '').replace(/[&<>"']/g, (c) => XML_ESCAPES[c] ?? c);
}

function origin(request: FastifyRequest, found: OpenStatusPage): string {
  return `${request.protocol}://${request.headers.host ?? found.page.customDomain ?? 'localhost'}`;
}

const updatedOf = (incident: IncidentRecord): string =>
  new Date(incident.updates[0]?.publicIncidentUpdateDate ?? incident.updatedAt ?? incident.createdAt).toISOString();

function entry(incident: IncidentRecord, pageUrl: string): string {
  const newest = incident.updates[0];
  const summary = `${statusWord(incident.lastUpdateStatus)} (${severityState(incident.severity).label})${newest ? `: ${newest.description}` : ''}`;
  return `  <entry>
    <id>urn:uuid:${escapeXml(incident.id)}</id>
    <title>${escapeXml(incident.name)}</title>
    <updated>${updatedOf(incident)}</updated>
    <published>${new Date(startOf(incident)).toISOString()}</published>
    <link rel="alternate" type="text/html" href="${escapeXml(incidentPath(pageUrl, incident))}"/>
    <summary>${escapeXml(summary)}</summary>
  </entry>
`;
}

export async function sendFeed(deps: WebDeps, request: FastifyRequest, reply: FastifyReply, found: OpenStatusPage): Promise<FastifyReply> {
  const { page, base } = found;
  const { entries } = await deps.store.statusPageReads.history(pageScope(page), { limit: FEED_ENTRIES });
  const pageUrl = origin(request, found) + base;
  const updated = entries.map(updatedOf).sort().at(-1) ?? new Date(page.updatedAt ?? page.createdAt).toISOString();
  const xml = `<?xml version="1.0" encoding="utf-8"?>
<feed xmlns="http://www.w3.org/2005/Atom">
  <id>urn:uuid:${escapeXml(page.id)}</id>
  <title>${escapeXml(`${page.name} incidents`)}</title>
  <updated>${updated}</updated>
  <author><name>${escapeXml(page.name)}</name></author>
  <link rel="self" type="application/atom+xml" href="${escapeXml(`${pageUrl}feed.atom`)}"/>
  <link rel="alternate" type="text/html" href="${escapeXml(pageUrl)}"/>
${entries.map((incident) => entry(incident, pageUrl)).join('')}</feed>
`;
  return reply
    .type('application/atom+xml; charset=utf-8')
    .header('x-content-type-options', 'nosniff')
    .header('cache-control', page.isPrivate ? 'no-store' : 'public, max-age=60')
    .send(xml);
}
