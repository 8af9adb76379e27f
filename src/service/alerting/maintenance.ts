/**
 * Whether a check is inside an active maintenance window at an instant: the rule the alerting step
 * uses to suppress notifications (the check's state and alert history are kept regardless).
 *
 * All times are UTC instants, so daylight saving plays no part: an occurrence of a repeating window
 * is its first one shifted by whole UTC days, weeks or calendar months.
 */
import moment from 'moment';
import type { MaintenanceWindow, RepeatUnit } from '../store/maintenance-window-types.ts';

/** The fields of a window that decide when it is active. */
export type WindowSchedule = Pick<
  MaintenanceWindow,
  'startsAt' | 'endsAt' | 'repeatUnit' | 'repeatInterval' | 'repeatEndsAt'
>;

/** The fields of a window that decide which checks it covers. */
export type WindowScope = Pick<MaintenanceWindow, 'tags' | 'silenceAlertsTags' | 'silenceAllAlerts'>;

const UNIT: Record<RepeatUnit, moment.unitOfTime.DurationConstructor> = { DAY: 'days', WEEK: 'weeks', MONTH: 'months' };
const SHORTEST_MS: Record<RepeatUnit, number> = { DAY: 86_400_000, WEEK: 7 * 86_400_000, MONTH: 28 * 86_400_000 };

/**
 * The start of occurrence k. Months are added from the first occurrence (not chained), so a window
 * on the 31st runs on the 30th of 30-day months and the 28th/29th of February, then the 31st again.
 */
function occurrenceStart(startMs: number, unit: RepeatUnit, interval: number, k: number): number {
  return moment
    .utc(startMs)
    .add(k * interval, UNIT[unit])
    .valueOf();
}

/** Whether occurrence k may run: its start's UTC calendar date is on or before repeatEndsAt. */
function startsByRepeatEnd(start: number, repeatEndsAt: string | null): boolean {
  return repeatEndsAt === null || new Date(start).toISOString().slice(0, 10) <= repeatEndsAt;
}

/** Whether `at` falls in the window or one of its occurrences: [start, start + duration). */
export function isWindowActiveAt(window: WindowSchedule, at: Date): boolean {
  const t = at.getTime();
  const start = Date.parse(window.startsAt);
  const duration = Date.parse(window.endsAt) - start;
  if (t < start) return false;
  const { repeatUnit: unit, repeatInterval: interval } = window;
  if (unit === null || interval === null) return t < start + duration;
  // The latest occurrence that can have started by t, then back over earlier ones still running.
  let k = Math.floor((t - start) / (SHORTEST_MS[unit] * interval));
  while (k > 0 && occurrenceStart(start, unit, interval, k) > t) k--;
  for (; k >= 0; k--) {
    const s = occurrenceStart(start, unit, interval, k);
    if (s + duration <= t) return false;
    if (s <= t && startsByRepeatEnd(s, window.repeatEndsAt)) return true;
  }
  return false;
}

/**
 * Whether the window covers a check with these tags (the check's own and its group's): every check
 * with silenceAllAlerts, else any shared tag with silenceAlertsTags, or with `tags` when that list is
 * empty (`tags` is the reference's older scope field, still what most clients send).
 */
export function windowCoversCheck(
  window: WindowScope,
  checkTags: readonly string[],
  groupTags: readonly string[] = [],
): boolean {
  if (window.silenceAllAlerts) return true;
  const scope = window.silenceAlertsTags.length > 0 ? window.silenceAlertsTags : window.tags;
  return scope.some((tag) => checkTags.includes(tag) || groupTags.includes(tag));
}

/** Whether any of the windows is active at `at` and covers the check: its notifications are suppressed. */
export function inMaintenance(
  windows: readonly (WindowSchedule & WindowScope)[],
  check: { tags: readonly string[]; groupTags?: readonly string[] },
  at: Date,
): boolean {
  return activeWindowFor(windows, check, at) !== undefined;
}

/** The first of `windows` that covers the check and is active at `at`: the one that silences it. */
export function activeWindowFor<W extends WindowSchedule & WindowScope>(
  windows: readonly W[],
  check: { tags: readonly string[]; groupTags?: readonly string[] },
  at: Date,
): W | undefined {
  return windows.find((w) => windowCoversCheck(w, check.tags, check.groupTags) && isWindowActiveAt(w, at));
}
