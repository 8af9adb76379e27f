/**
 * Private locations (/app/locations): per location, its queue depth, the agents online (version,
 * capabilities, jobs running, last seen) and the error reports its agents sent, newest first.
 */
import type { FastifyInstance } from 'fastify';
import { RUNNING_AGENT_WINDOW_MS } from '../../routes/private-locations.ts';
import type { Agent, ErrorReport, PrivateLocation } from '../../store/store.ts';
import type { WebDeps } from '../deps.ts';
import { html } from '../html.ts';
import { countOf, timeOf } from './format.ts';
import { sendConsolePage } from './layout.ts';
import { LIVE_SECONDS, sendLiveContent } from './live.ts';

const REPORTS_SHOWN = 10;

interface LocationView {
  location: PrivateLocation;
  agents: Agent[];
  queued: number;
  leasedByAgent: Record<string, number>;
  reports: ErrorReport[];
}

async function loadLocations(deps: WebDeps, accountId: string, now = Date.now()): Promise<LocationView[]> {
  const locations = await deps.store.locations.list(accountId);
  return Promise.all(
    locations.map(async (location) => {
      const [agents, load, reports] = await Promise.all([
        deps.store.agents.listByLocation(location.id),
        deps.store.runs.locationLoad(location.id),
        deps.store.errorReports.list(location.id, REPORTS_SHOWN),
      ]);
      const online = agents.filter(
        (a) => a.goneAt === null && now - Date.parse(a.lastSeenAt) <= RUNNING_AGENT_WINDOW_MS,
      );
      return { location, agents: online, queued: load.queued, leasedByAgent: load.leasedByAgent, reports };
    }),
  );
}

/** A report's headline: its message, or its first exception's type and value. */
function reportSummary(event: Record<string, unknown>): string {
  if (typeof event.message === 'string') return event.message;
  const values = (event.exception as { values?: Array<{ type?: string; value?: string }> } | undefined)?.values;
  const first = values?.[0];
  return first ? [first.type, first.value].filter(Boolean).join(': ') : 'no message';
}

function agentsTable(view: LocationView) {
  if (view.agents.length === 0) return html`<p class="empty">No agent of this location is online.</p>`;
  return html`<table>
    <caption>Agents online at ${view.location.name}</caption>
    <thead><tr><th scope="col">Agent</th><th scope="col">Version</th><th scope="col">Capabilities</th><th scope="col">Jobs running</th><th scope="col">Last seen</th></tr></thead>
    <tbody>${view.agents.map(
      (a) => html`<tr>
        <th scope="row">${a.hostname} <span class="muted">${a.id}</span></th>
        <td>${a.version}</td>
        <td>${a.checkTypes.join(', ')}${a.runtimes.length > 0 ? html`<br /><span class="muted">runtimes ${a.runtimes.join(', ')}</span>` : null}</td>
        <td>${view.leasedByAgent[a.id] ?? 0}</td>
        <td>${timeOf(a.lastSeenAt)}</td>
      </tr>`,
    )}</tbody>
  </table>`;
}

function reportsTable(view: LocationView) {
  if (view.reports.length === 0) return html`<p class="empty">No error reports from this location's agents.</p>`;
  return html`<table>
    <caption>Error reports from ${view.location.name}, newest first</caption>
    <thead><tr><th scope="col">Received</th><th scope="col">Error</th><th scope="col">Release</th></tr></thead>
    <tbody>${view.reports.map(
      (r) =>
        html`<tr><th scope="row">${timeOf(r.receivedAt)}</th><td>${reportSummary(r.event)}</td><td>${String(r.event.release ?? '')}</td></tr>`,
    )}</tbody>
  </table>`;
}

function locationSection(view: LocationView) {
  const id = `location-${view.location.id}`;
  return html`<section class="card" aria-labelledby=${id}>
    <h2 id=${id}>${view.location.name} <span class="muted">${view.location.slugName}</span></h2>
    <p>Queue depth: <strong>${countOf(view.queued, 'run')}</strong> waiting for an agent</p>
    ${agentsTable(view)}
    <h3>Error reports</h3>
    ${reportsTable(view)}
  </section>`;
}

function locationsContent(views: LocationView[]) {
  if (views.length === 0)
    return html`<p class="empty">No private locations yet: create one with the API (POST /v1/private-locations).</p>`;
  return html`${views.map(locationSection)}`;
}

export async function locationsPage(app: FastifyInstance, deps: WebDeps): Promise<void> {
  app.get('/app/locations', async (request, reply) => {
    const views = await loadLocations(deps, request.consoleAccountId);
    return sendConsolePage(request, reply, {
      title: 'Private locations',
      current: '/app/locations',
      children: html`<div data-live-src="/app/locations/live" data-live-seconds=${LIVE_SECONDS}>${locationsContent(views)}</div>`,
    });
  });

  app.get('/app/locations/live', { config: { consoleActivity: false } }, async (request, reply) => {
    const views = await loadLocations(deps, request.consoleAccountId);
    return sendLiveContent(reply, locationsContent(views));
  });
}
