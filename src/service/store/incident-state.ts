/**
 * How an incident's lastUpdateStatus and duration follow from its updates. The spec leaves both
 * open; docs/api.md ("Status page incidents") states the rules implemented here.
 */
import type { IncidentStatus } from './status-pages-types.ts';

export interface TimelineEntry {
  status: IncidentStatus | null;
  publicIncidentUpdateDate: string;
  /** Breaks ties between updates published at the same instant: the later-created one is newer. */
  sequence: number;
}

/** The status an incident has before any update carries one. */
export const INITIAL_STATUS: IncidentStatus = 'INVESTIGATING';

/** Oldest first, by publicIncidentUpdateDate and then by creation. */
export function chronological<T extends TimelineEntry>(entries: readonly T[]): T[] {
  return [...entries].sort(
    (a, b) =>
      Date.parse(a.publicIncidentUpdateDate) - Date.parse(b.publicIncidentUpdateDate) || a.sequence - b.sequence,
  );
}

/**
 * lastUpdateStatus: the status of the newest update that carries one (updates without a status
 * add text only). duration: whole minutes, rounded down, from the first update to the update that
 * last moved the incident to RESOLVED; null while the incident is not resolved, so reopening an
 * incident (a later non-RESOLVED update) clears it again.
 */
export function deriveIncidentState(entries: readonly TimelineEntry[]): {
  lastUpdateStatus: IncidentStatus;
  duration: number | null;
} {
  const timeline = chronological(entries);
  const withStatus = timeline.filter((e) => e.status !== null);
  const lastUpdateStatus = withStatus.at(-1)?.status ?? INITIAL_STATUS;
  if (lastUpdateStatus !== 'RESOLVED') return { lastUpdateStatus, duration: null };
  // The first RESOLVED update of the trailing run of RESOLVED ones is the moment it was resolved.
  let resolvedIndex = withStatus.length - 1;
  while (resolvedIndex > 0 && withStatus[resolvedIndex - 1]?.status === 'RESOLVED') resolvedIndex -= 1;
  const start = timeline[0];
  const resolved = withStatus[resolvedIndex];
  if (!start || !resolved) return { lastUpdateStatus, duration: null };
  const minutes = Math.floor(
    (Date.parse(resolved.publicIncidentUpdateDate) - Date.parse(start.publicIncidentUpdateDate)) / 60_000,
  );
  return { lastUpdateStatus, duration: Math.max(0, minutes) };
}

/**
 * When the incident started: its earliest update's public date, normalized to toISOString() so stored
 * values sort as strings (the history reads them by index); null before it has any update.
 */
export function incidentStart(entries: readonly TimelineEntry[]): string | null {
  const first = chronological(entries)[0];
  return first ? new Date(first.publicIncidentUpdateDate).toISOString() : null;
}
