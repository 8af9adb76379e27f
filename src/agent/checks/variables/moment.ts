/**
 * The reference's `{{moment}}` helper: a date and time, formatted with moment.js format tokens.
 *
 *   {{moment}}                           now, as moment's default format (2020-08-26T14:03:09+00:00)
 *   {{moment "YYYY-MM-DD"}}              now, formatted
 *   {{moment "2 days ago" "YYYY-MM-DD"}} a relative date, formatted
 *
 * Times are UTC (the agent's clock). The date expressions understood are `now`, `today`,
 * `yesterday`, `tomorrow`, `N <unit>s ago`, `in N <unit>s`, `N <unit>s from now`, `last <unit>` and
 * `next <unit>` (units: second, minute, hour, day, week, month, year). Written by hand because no
 * date library is a dependency of the agent; the tokens are moment's (docs/checks.md lists them).
 */

const UNITS = ['second', 'minute', 'hour', 'day', 'week', 'month', 'year'] as const;
type Unit = (typeof UNITS)[number];

const DEFAULT_FORMAT = 'YYYY-MM-DDTHH:mm:ssZ';

/** Fixed lengths: times are UTC, so a day is always 24 hours. */
const UNIT_MS: Record<Exclude<Unit, 'month' | 'year'>, number> = {
  second: 1_000,
  minute: 60_000,
  hour: 3_600_000,
  day: 86_400_000,
  week: 604_800_000,
};

/** Months and years move the calendar; as in moment, the 31st of a shorter month becomes its last day. */
function shiftMonths(date: Date, months: number): Date {
  const d = new Date(date.getTime());
  const day = d.getUTCDate();
  d.setUTCDate(1);
  d.setUTCMonth(d.getUTCMonth() + months);
  const lastDay = new Date(Date.UTC(d.getUTCFullYear(), d.getUTCMonth() + 1, 0)).getUTCDate();
  d.setUTCDate(Math.min(day, lastDay));
  return d;
}

function shift(date: Date, unit: Unit, amount: number): Date {
  if (unit === 'month' || unit === 'year') return shiftMonths(date, unit === 'year' ? 12 * amount : amount);
  return new Date(date.getTime() + amount * UNIT_MS[unit]);
}

const unitOf = (word: string): Unit | undefined => UNITS.find((u) => word === u || word === `${u}s`);

const NAMED: Record<string, number> = { now: 0, today: 0, yesterday: -1, tomorrow: 1 };

/** The date an expression names relative to `now`, or undefined when it is not one we read. */
export function relativeDate(expression: string, now: Date): Date | undefined {
  const words = expression.trim().toLowerCase().split(/\s+/);
  const [first = '', second = '', third = '', fourth] = words;
  if (words.length === 1 && first in NAMED) return shift(now, 'day', NAMED[first] as number);
  let amount: number | undefined;
  let unit: Unit | undefined;
  if (words.length === 2 && (first === 'last' || first === 'next')) [amount, unit] = [first === 'last' ? -1 : 1, unitOf(second)];
  else if (words.length === 3 && third === 'ago') [amount, unit] = [-Number(first), unitOf(second)];
  else if (words.length === 3 && first === 'in') [amount, unit] = [Number(second), unitOf(third)];
  else if (words.length === 4 && third === 'from' && fourth === 'now') [amount, unit] = [Number(first), unitOf(second)];
  if (unit === undefined || amount === undefined || !Number.isInteger(amount)) return undefined;
  return shift(now, unit, amount);
}

const MONTHS = ['January', 'February', 'March', 'April', 'May', 'June', 'July', 'August', 'September', 'October', 'November', 'December'];
const DAYS = ['Sunday', 'Monday', 'Tuesday', 'Wednesday', 'Thursday', 'Friday', 'Saturday'];
const pad = (n: number, width = 2): string => String(n).padStart(width, '0');

function ordinal(n: number): string {
  const tens = n % 100;
  if (tens >= 11 && tens <= 13) return `${n}th`;
  return `${n}${['th', 'st', 'nd', 'rd'][n % 10] ?? 'th'}`;
}

function dayOfYear(d: Date): number {
  return Math.floor((d.getTime() - Date.UTC(d.getUTCFullYear(), 0, 1)) / 86_400_000) + 1;
}

/** moment's tokens, longest first so `YYYY` wins over `YY`; all in UTC. */
const TOKENS: Record<string, (d: Date) => string> = {
  YYYY: (d) => pad(d.getUTCFullYear(), 4),
  YY: (d) => pad(d.getUTCFullYear() % 100),
  Q: (d) => String(Math.floor(d.getUTCMonth() / 3) + 1),
  MMMM: (d) => MONTHS[d.getUTCMonth()] as string,
  MMM: (d) => (MONTHS[d.getUTCMonth()] as string).slice(0, 3),
  MM: (d) => pad(d.getUTCMonth() + 1),
  M: (d) => String(d.getUTCMonth() + 1),
  DDDD: (d) => pad(dayOfYear(d), 3),
  DDD: (d) => String(dayOfYear(d)),
  DD: (d) => pad(d.getUTCDate()),
  Do: (d) => ordinal(d.getUTCDate()),
  D: (d) => String(d.getUTCDate()),
  dddd: (d) => DAYS[d.getUTCDay()] as string,
  ddd: (d) => (DAYS[d.getUTCDay()] as string).slice(0, 3),
  dd: (d) => (DAYS[d.getUTCDay()] as string).slice(0, 2),
  d: (d) => String(d.getUTCDay()),
  HH: (d) => pad(d.getUTCHours()),
  H: (d) => String(d.getUTCHours()),
  hh: (d) => pad(d.getUTCHours() % 12 || 12),
  h: (d) => String(d.getUTCHours() % 12 || 12),
  kk: (d) => pad(d.getUTCHours() || 24),
  k: (d) => String(d.getUTCHours() || 24),
  mm: (d) => pad(d.getUTCMinutes()),
  m: (d) => String(d.getUTCMinutes()),
  ss: (d) => pad(d.getUTCSeconds()),
  s: (d) => String(d.getUTCSeconds()),
  SSS: (d) => pad(d.getUTCMilliseconds(), 3),
  SS: (d) => pad(Math.floor(d.getUTCMilliseconds() / 10)),
  S: (d) => String(Math.floor(d.getUTCMilliseconds() / 100)),
  A: (d) => (d.getUTCHours() < 12 ? 'AM' : 'PM'),
  a: (d) => (d.getUTCHours() < 12 ? 'am' : 'pm'),
  X: (d) => String(Math.floor(d.getTime() / 1000)),
  x: (d) => String(d.getTime()),
  ZZ: () => '+0000',
  Z: () => '+00:00',
};

// `[...]` is literal text, as in moment; then the tokens, longest first.
const FORMAT = new RegExp(
  `\\[([^\\]]*)\\]|${Object.keys(TOKENS)
    .sort((a, b) => b.length - a.length)
    .join('|')}`,
  'g',
);

/** `date` written with moment.js format tokens (UTC); other characters are kept as they are. */
export function formatMoment(date: Date, format: string): string {
  return format.replace(FORMAT, (token: string, literal: string | undefined) =>
    literal !== undefined ? literal : (TOKENS[token] as (d: Date) => string)(date),
  );
}

/** The helper's value for its arguments, or why they cannot be used. */
export function momentHelper(args: string[], now: Date): { value: string } | { error: string } {
  if (args.length === 0) return { value: formatMoment(now, DEFAULT_FORMAT) };
  if (args.length === 1) return { value: formatMoment(now, args[0] as string) };
  if (args.length > 2) return { error: 'moment takes at most two arguments: a date expression and a format' };
  const date = relativeDate(args[0] as string, now);
  if (date === undefined) {
    return {
      error: `moment cannot read the date ${JSON.stringify(args[0])}; use now, today, yesterday, tomorrow, "N days ago", "in N hours", "N weeks from now", "last month" or "next year"`,
    };
  }
  return { value: formatMoment(date, args[1] as string) };
}
