/**
 * What a status page says about its services: each one's state from its open incidents (the highest
 * severity decides) and its last 90 days, one entry per UTC day with the incidents that started on it.
 * Pure functions of what the store returned, so the page's words are tested apart from its HTML.
 */
import type { IncidentDay } from '../../store/status-page-web-types.ts';
import { INCIDENT_SEVERITIES, type IncidentSeverity, type IncidentStatus } from '../../store/status-pages-types.ts';

export const HISTORY_DAYS = 90;

export interface ServiceState {
  label: string;
  /** The suffix of the state-* and bar classes (web.css, status-page.css). */
  tone: 'ok' | 'degraded' | 'partial' | 'down';
}

const OPERATIONAL: ServiceState = { label: 'Operational', tone: 'ok' };

const BY_SEVERITY: Record<IncidentSeverity, ServiceState> = {
  CRITICAL: { label: 'Major outage', tone: 'down' },
  MAJOR: { label: 'Partial outage', tone: 'partial' },
  MEDIUM: { label: 'Degraded performance', tone: 'degraded' },
  MINOR: { label: 'Minor issue', tone: 'degraded' },
};

export function severityState(severity: IncidentSeverity | undefined): ServiceState {
  return severity ? BY_SEVERITY[severity] : OPERATIONAL;
}

export function worstSeverity(severities: Iterable<IncidentSeverity>): IncidentSeverity | undefined {
  let worst: IncidentSeverity | undefined;
  for (const s of severities)
    if (!worst || INCIDENT_SEVERITIES.indexOf(s) < INCIDENT_SEVERITIES.indexOf(worst)) worst = s;
  return worst;
}

const STATUS_WORDS: Record<IncidentStatus, string> = {
  INVESTIGATING: 'Investigating',
  IDENTIFIED: 'Identified',
  MONITORING: 'Monitoring',
  RESOLVED: 'Resolved',
};

export const statusWord = (status: IncidentStatus): string => STATUS_WORDS[status];

const DAY_FORMAT = new Intl.DateTimeFormat('en-GB', {
  day: 'numeric',
  month: 'short',
  year: 'numeric',
  timeZone: 'UTC',
});
const TIME_FORMAT = new Intl.DateTimeFormat('en-GB', { dateStyle: 'medium', timeStyle: 'short', timeZone: 'UTC' });

export const formatDay = (isoDay: string): string => DAY_FORMAT.format(new Date(`${isoDay}T00:00:00Z`));
export const formatTime = (iso: string): string => `${TIME_FORMAT.format(new Date(iso))} UTC`;

export interface HistoryDay {
  /** YYYY-MM-DD, UTC. */
  day: string;
  /** The day as the page writes it ("3 Nov 2026"): formatted once per day, not once per service. */
  date: string;
  incidents: { id: string; name: string; severity: IncidentSeverity }[];
}

/** The first day of the history that ends with `now`'s day, as the ISO instant the store filters by. */
export function historyStart(now: Date): string {
  const start = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate() - (HISTORY_DAYS - 1)));
  return start.toISOString();
}

/** Per service id: its 90 days, oldest first, each with the incidents (newest first) that started that day. */
export function historyByService(
  now: Date,
  serviceIds: readonly string[],
  incidents: readonly IncidentDay[],
): Map<string, HistoryDay[]> {
  const startMs = Date.parse(historyStart(now));
  const days = Array.from({ length: HISTORY_DAYS }, (_, i) =>
    new Date(startMs + i * 86_400_000).toISOString().slice(0, 10),
  );
  const dates = days.map(formatDay);
  // Quiet days are one object per day shared by every bar (a page of 50 services has 4,500 days);
  // a day gets its own object when its first incident lands on it.
  const quiet: HistoryDay[] = days.map((day, i) => ({
    day,
    date: dates[i] ?? day,
    incidents: Object.freeze([]) as unknown as HistoryDay['incidents'],
  }));
  const result = new Map<string, HistoryDay[]>(serviceIds.map((id) => [id, quiet.slice()]));
  for (const incident of incidents) {
    const index = Math.floor((Date.parse(incident.startedAt) - startMs) / 86_400_000);
    const bar = result.get(incident.serviceId);
    const day = bar?.[index];
    if (!bar || !day) continue;
    const own: HistoryDay = day.incidents.length === 0 ? { day: day.day, date: day.date, incidents: [] } : day;
    bar[index] = own;
    own.incidents.push({ id: incident.id, name: incident.name, severity: incident.severity });
  }
  return result;
}

/** How many incident names a day's label lists before "and N more". */
const NAMES_PER_DAY = 3;

/** A day's text (the bar is not colour only): "3 Nov 2026: no incidents", or the count, the worst state and names. */
export function dayLabel(day: HistoryDay): string {
  const date = day.date;
  if (day.incidents.length === 0) return `${date}: no incidents`;
  const state = severityState(worstSeverity(day.incidents.map((i) => i.severity)));
  const names = day.incidents.slice(0, NAMES_PER_DAY).map((i) => i.name);
  const more = day.incidents.length - names.length;
  const count = day.incidents.length === 1 ? '1 incident' : `${day.incidents.length} incidents`;
  return `${date}: ${count}, ${state.label.toLowerCase()}: ${names.join('; ')}${more > 0 ? ` and ${more} more` : ''}`;
}
