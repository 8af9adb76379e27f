/**
 * Calendar buckets (day, week from Monday, month) in a named IANA time zone, for GET /v1/reporting's
 * `granularity`. Boundaries are local midnights converted to UTC with the zone's offset at that
 * moment (checked twice, so a midnight next to a DST change lands right).
 */
import { BadRequestError } from '../http/errors.ts';

export type Granularity = 'day' | 'week' | 'month';

/** A named zone Intl knows; UTC offsets such as "+05:00" are refused as the reference says. */
export function checkTimeZone(timezone: string): string {
  const named = /^[A-Za-z][A-Za-z0-9_+\-/]*$/.test(timezone);
  try {
    if (named) new Intl.DateTimeFormat('en-US', { timeZone: timezone });
  } catch {
    throw new BadRequestError(
      `querystring/timezone: ${JSON.stringify(timezone)} is not a named IANA time zone (e.g. America/New_York)`,
    );
  }
  if (!named)
    throw new BadRequestError(
      `querystring/timezone: ${JSON.stringify(timezone)} is not a named IANA time zone (e.g. America/New_York)`,
    );
  return timezone;
}

const formatters = new Map<string, Intl.DateTimeFormat>();

/** The wall-clock date and time in `tz` of the instant `ms`. */
function localParts(ms: number, tz: string): { y: number; m: number; d: number; hh: number; mm: number; ss: number } {
  let f = formatters.get(tz);
  if (!f) {
    f = new Intl.DateTimeFormat('en-US', {
      timeZone: tz,
      hourCycle: 'h23',
      year: 'numeric',
      month: 'numeric',
      day: 'numeric',
      hour: 'numeric',
      minute: 'numeric',
      second: 'numeric',
    });
    formatters.set(tz, f);
  }
  const parts = Object.fromEntries(f.formatToParts(new Date(ms)).map((p) => [p.type, Number(p.value)]));
  return {
    y: parts.year ?? 1970,
    m: parts.month ?? 1,
    d: parts.day ?? 1,
    hh: parts.hour ?? 0,
    mm: parts.minute ?? 0,
    ss: parts.second ?? 0,
  };
}

/** How far `tz`'s wall clock is ahead of UTC at `ms`. */
function offsetAt(ms: number, tz: string): number {
  const p = localParts(ms, tz);
  return Date.UTC(p.y, p.m - 1, p.d, p.hh, p.mm, p.ss) - Math.floor(ms / 1000) * 1000;
}

/** The instant of local midnight of the date y-m-d (month 1-12, overflow allowed) in `tz`. */
function localMidnight(y: number, m: number, d: number, tz: string): number {
  const wall = Date.UTC(y, m - 1, d);
  const guess = wall - offsetAt(wall, tz);
  return wall - offsetAt(guess, tz);
}

function bucketStart(ms: number, unit: Granularity, tz: string): { y: number; m: number; d: number } {
  const p = localParts(ms, tz);
  if (unit === 'month') return { y: p.y, m: p.m, d: 1 };
  if (unit === 'day') return { y: p.y, m: p.m, d: p.d };
  const weekday = new Date(Date.UTC(p.y, p.m - 1, p.d)).getUTCDay();
  return { y: p.y, m: p.m, d: p.d - ((weekday + 6) % 7) };
}

export const MAX_BUCKETS = 120;

/** The buckets covering [fromMs, toMs), each clamped to the window, ascending; 400 beyond MAX_BUCKETS. */
export function calendarBuckets(
  fromMs: number,
  toMs: number,
  unit: Granularity,
  tz: string,
): Array<{ fromMs: number; toMs: number }> {
  let { y, m, d } = bucketStart(fromMs, unit, tz);
  let start = localMidnight(y, m, d, tz);
  const out: Array<{ fromMs: number; toMs: number }> = [];
  while (start < toMs) {
    if (unit === 'month') m += 1;
    else d += unit === 'week' ? 7 : 1;
    const next = localMidnight(y, m, d, tz);
    out.push({ fromMs: Math.max(start, fromMs), toMs: Math.min(next, toMs) });
    if (out.length > MAX_BUCKETS)
      throw new BadRequestError(`querystring/granularity: the window holds more than ${MAX_BUCKETS} ${unit} buckets`);
    start = next;
  }
  return out;
}
