/**
 * The time window of an analytics or reporting query: a preset (`quickRange`) or custom `from`/`to`,
 * which override it as the reference says. Presets are calendar ranges in UTC; weeks start on Monday.
 * Figures come from hourly rollups, so a window is read whole hours at a time: the hour that holds
 * `from` counts whole, up to the hour that holds `to`.
 */
import { BadRequestError } from '../http/errors.ts';
import { parseInstant } from '../routes/private-location-metrics.ts';

export const HOUR_MS = 3_600_000;
const DAY_MS = 24 * HOUR_MS;
/** The longest window a query may name (the reference's reporting limit; rollups are kept 13 months by default). */
export const MAX_WINDOW_DAYS = 400;

export interface TimeWindow {
  fromMs: number;
  toMs: number;
}

const startOfUtcDay = (ms: number): number => Math.floor(ms / DAY_MS) * DAY_MS;
const startOfUtcWeek = (ms: number): number => startOfUtcDay(ms) - ((new Date(ms).getUTCDay() + 6) % 7) * DAY_MS;
const startOfUtcMonth = (ms: number, back = 0): number => {
  const d = new Date(ms);
  return Date.UTC(d.getUTCFullYear(), d.getUTCMonth() - back, 1);
};

/** The window of a preset; `last24Hrs` is the reporting API's spelling of `last24Hours`. */
export function presetWindow(preset: string, nowMs: number): TimeWindow {
  switch (preset) {
    case 'last7Days':
      return { fromMs: nowMs - 7 * DAY_MS, toMs: nowMs };
    case 'last30Days':
      return { fromMs: nowMs - 30 * DAY_MS, toMs: nowMs };
    case 'thisWeek':
      return { fromMs: startOfUtcWeek(nowMs), toMs: nowMs };
    case 'thisMonth':
      return { fromMs: startOfUtcMonth(nowMs), toMs: nowMs };
    case 'lastWeek':
      return { fromMs: startOfUtcWeek(nowMs) - 7 * DAY_MS, toMs: startOfUtcWeek(nowMs) };
    case 'lastMonth':
      return { fromMs: startOfUtcMonth(nowMs, 1), toMs: startOfUtcMonth(nowMs) };
    default:
      return { fromMs: nowMs - DAY_MS, toMs: nowMs };
  }
}

/**
 * `from`/`to` (UNIX seconds or ISO dates, as the reference's `date` format allows) override the
 * preset: `to` alone ends the preset's length early, `from` alone runs to now.
 */
export function resolveWindow(
  query: { from?: string; to?: string; quickRange?: string },
  nowMs: number,
  defaultPreset: string,
): TimeWindow {
  const preset = presetWindow(query.quickRange ?? defaultPreset, nowMs);
  if (query.from === undefined && query.to === undefined) return preset;
  const toMs = query.to === undefined ? nowMs : parseInstant('to', query.to);
  const fromMs = query.from === undefined ? toMs - (preset.toMs - preset.fromMs) : parseInstant('from', query.from);
  if (fromMs >= toMs) throw new BadRequestError('querystring/from must be before querystring/to');
  if (toMs - fromMs > MAX_WINDOW_DAYS * DAY_MS)
    throw new BadRequestError(`querystring/from must be at most ${MAX_WINDOW_DAYS} days before querystring/to`);
  return { fromMs, toMs };
}

/** The rollup hours a window reads: [fromHour, toHour). */
export function hoursOf(window: TimeWindow): { fromHour: number; toHour: number } {
  return { fromHour: Math.floor(window.fromMs / HOUR_MS), toHour: Math.ceil(window.toMs / HOUR_MS) };
}
