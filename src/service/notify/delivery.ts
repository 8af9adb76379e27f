import type { IncidentNotification } from '../store/status-pages-types.ts';

/** What one delivery attempt came to; the worker decides what happens next from it. */
export type DeliveryOutcome =
  | { ok: true }
  /** `permanent`: retrying cannot help (e.g. a 4xx answer or a rejected mailbox). */
  | { ok: false; permanent: boolean; error: string };

/** The text of an email notification; the webhook sends the same facts as JSON. */
export function notificationSubject(n: IncidentNotification): string {
  const status = n.incidentUpdate.status ?? n.incident.lastUpdateStatus;
  return `[${status}] ${n.incident.name}`;
}

export function notificationText(n: IncidentNotification): string {
  return [
    `${n.incident.name} (severity ${n.incident.severity})`,
    `Status: ${n.incidentUpdate.status ?? n.incident.lastUpdateStatus}`,
    `Published: ${n.incidentUpdate.publicIncidentUpdateDate}`,
    `Affected services: ${n.incident.services.map((s) => s.name).join(', ') || 'none'}`,
    '',
    n.incidentUpdate.description,
    '',
    `Status pages: ${n.statusPages.map((p) => p.name).join(', ')}`,
  ].join('\n');
}
