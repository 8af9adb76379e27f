/**
 * The reference's `{{moment}}` helper: a date and time, formatted with moment.js format tokens.
 *
 *   {{moment}}                           now, as moment's default format (2020-08-26T14:03:09+00:00)
 *   {{moment "YYYY-MM-DD"}}              now, formatted
 *   {{moment "2 days ago" "YYYY-MM-DD"}} a relative date, formatted
 *
 * Times are UTC (the agent's clock). Formatting and date arithmetic are moment.js itself, as in the
 * reference's helper; moment loads on the first use. moment does not read phrases, so the date
 * expressions understood are read here: `now`, `today`, `yesterday`, `tomorrow`, `N <unit>s ago`,
 * `in N <unit>s`, `N <unit>s from now`, `last <unit>` and `next <unit>` (units: second, minute, hour,
 * day, week, month, year).
 */
import { createRequire } from 'node:module';
import type momentType from 'moment';

let loaded: typeof momentType | undefined;
function moment(date: Date): momentType.Moment {
  loaded ??= createRequire(import.meta.url)('moment') as typeof momentType;
  return loaded.utc(date);
}

const UNITS = ['second', 'minute', 'hour', 'day', 'week', 'month', 'year'] as const;
type Unit = (typeof UNITS)[number];

const unitOf = (word: string): Unit | undefined => UNITS.find((u) => word === u || word === `${u}s`);

const NAMED: Record<string, number> = { now: 0, today: 0, yesterday: -1, tomorrow: 1 };

/** The date an expression names relative to `now`, or undefined when it is not one we read. */
export function relativeDate(expression: string, now: Date): Date | undefined {
  const words = expression.trim().toLowerCase().split(/\s+/);
  const [first = '', second = '', third = '', fourth] = words;
  if (words.length === 1 && first in NAMED)
    return moment(now)
      .add(NAMED[first] as number, 'day')
      .toDate();
  let amount: number | undefined;
  let unit: Unit | undefined;
  if (words.length === 2 && (first === 'last' || first === 'next'))
    [amount, unit] = [first === 'last' ? -1 : 1, unitOf(second)];
  else if (words.length === 3 && third === 'ago') [amount, unit] = [-Number(first), unitOf(second)];
  else if (words.length === 3 && first === 'in') [amount, unit] = [Number(second), unitOf(third)];
  else if (words.length === 4 && third === 'from' && fourth === 'now') [amount, unit] = [Number(first), unitOf(second)];
  if (unit === undefined || amount === undefined || !Number.isInteger(amount)) return undefined;
  return moment(now).add(amount, unit).toDate();
}

/**
 * `date` written with moment.js format tokens (UTC). Without a format, moment's default for local
 * time: the reference's runner formats local time on a UTC clock, so it ends in +00:00, not Z.
 */
export function formatMoment(date: Date, format?: string): string {
  const m = moment(date);
  return m.format(format ?? (loaded as typeof momentType).defaultFormat);
}

/** The helper's value for its arguments, or why they cannot be used. */
export function momentHelper(args: string[], now: Date): { value: string } | { error: string } {
  if (args.length === 0) return { value: formatMoment(now) };
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
