/** An incident as the status pages show it: name, severity, status, services, and its updates newest first. */
import type { IncidentRecord } from '../../store/status-pages-types.ts';
import { html } from '../html.ts';
import { formatTime, severityState, statusWord } from './state.ts';

export const incidentPath = (base: string, incident: { id: string }): string => `${base}incidents/${incident.id}`;

/** When the incident started: its oldest update (updates are newest first). */
export const startOf = (incident: IncidentRecord): string =>
  incident.updates.at(-1)?.publicIncidentUpdateDate ?? incident.createdAt;

export function incidentFacts(incident: IncidentRecord) {
  const state = severityState(incident.severity);
  return html`<p class="sp-facts">
    <span class=${`state state-${incident.lastUpdateStatus === 'RESOLVED' ? 'ok' : state.tone}`}>${statusWord(incident.lastUpdateStatus)}</span>
    <span> · ${state.label}</span>
    ${incident.services.length > 0 ? html`<span> · Affects ${incident.services.map((s) => s.name).join(', ')}</span>` : null}
    <span> · Started <time datetime=${startOf(incident)}>${formatTime(startOf(incident))}</time></span>
    ${incident.duration === null ? null : html`<span> · Lasted ${incident.duration} min</span>`}
  </p>`;
}

export function incidentUpdates(incident: IncidentRecord) {
  return html`<ol class="sp-updates" aria-label=${`Updates on ${incident.name}, newest first`}>
    ${incident.updates.map(
      (u) => html`<li>
        <p class="sp-update-head">
          ${u.status ? html`<strong>${statusWord(u.status)}</strong> · ` : null}
          <time datetime=${u.publicIncidentUpdateDate}>${formatTime(u.publicIncidentUpdateDate)}</time>
        </p>
        <p class="sp-update-text">${u.description}</p>
      </li>`,
    )}
  </ol>`;
}

/** An incident in a list (the open incidents): its name links to its own page. */
export function incidentCard(incident: IncidentRecord, base: string) {
  return html`<article class="card sp-incident">
    <h3><a href=${incidentPath(base, incident)}>${incident.name}</a></h3>
    ${incidentFacts(incident)} ${incidentUpdates(incident)}
  </article>`;
}
