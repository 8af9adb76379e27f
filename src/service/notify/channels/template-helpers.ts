/**
 * The helpers a WEBHOOK body template can call, with the names and arguments the vendor documents
 * (integrations/alerts/webhooks.mdx): its own ($UUID, $RANDOM_NUMBER, tagValue, startsWith, replace,
 * split, year, date/moment) and the comparison helpers it takes from handlebars-helpers. Each
 * comparison works as a block (`{{#eq a b}}…{{else}}…{{/eq}}`) and inline (`{{#if (eq a b)}}`).
 * Dates are formatted in UTC with moment, at the time the render was given (`data.now`). Outpost
 * adds `json`.
 */
import { randomInt, randomUUID } from 'node:crypto';
import Handlebars from 'handlebars';
import moment from 'moment';

type Options = Handlebars.HelperOptions;
type Helper = (this: unknown, ...args: unknown[]) => unknown;

/** A block helper renders its block or its {{else}}; used inline it gives the boolean. */
function decide(result: boolean, context: unknown, options: Options | undefined): unknown {
  if (!options?.fn) return result;
  return result ? options.fn(context) : options.inverse(context);
}

/** Splits Handlebars' trailing options argument from the helper's own arguments. */
function splitOptions<T extends unknown[]>(args: unknown[]): { values: T; options: Options } {
  return { values: args.slice(0, -1) as T, options: args.at(-1) as Options };
}

/** A helper that compares its arguments and decides the block from the answer. */
function comparing(test: (...values: unknown[]) => boolean, negate = false): Helper {
  return function (this: unknown, ...args: unknown[]) {
    const { values, options } = splitOptions(args);
    return decide(test(...values) !== negate, this, options);
  };
}

const num = (v: unknown): number => Number(v);
const truthy = (v: unknown): boolean => (Array.isArray(v) ? v.length > 0 : Boolean(v));

const OPERATORS: Record<string, (a: unknown, b: unknown) => boolean> = {
  // biome-ignore lint/suspicious/noDoubleEquals: the vendor's `==` operator compares loosely
  '==': (a, b) => a == b,
  '===': (a, b) => a === b,
  // biome-ignore lint/suspicious/noDoubleEquals: the vendor's `!=` operator compares loosely
  '!=': (a, b) => a != b,
  '!==': (a, b) => a !== b,
  '<': (a, b) => num(a) < num(b),
  '<=': (a, b) => num(a) <= num(b),
  '>': (a, b) => num(a) > num(b),
  '>=': (a, b) => num(a) >= num(b),
  typeof: (a, b) => typeof a === b,
};

function compareWith(a: unknown, operator: unknown, b: unknown): boolean {
  const op = OPERATORS[String(operator)];
  if (!op)
    throw new Error(
      `compare: unknown operator ${JSON.stringify(operator)}; use one of ${Object.keys(OPERATORS).join(' ')}`,
    );
  return op(a, b);
}

function contains(collection: unknown, value: unknown, start?: unknown): boolean {
  const from = typeof start === 'number' ? start : 0;
  if (Array.isArray(collection)) return collection.includes(value, from);
  if (typeof collection === 'string') return collection.includes(String(value), from);
  return false;
}

function has(value: unknown, ...pattern: unknown[]): boolean {
  if (pattern.length === 0) return value !== null && value !== undefined && truthy(value);
  if (Array.isArray(value) || typeof value === 'string') return contains(value, pattern[0]);
  return typeof value === 'object' && value !== null && String(pattern[0]) in value;
}

export const COMPARISON_HELPERS: Record<string, Helper> = {
  eq: comparing((a, b) => a === b),
  // biome-ignore lint/suspicious/noDoubleEquals: `is` is the loose comparison of handlebars-helpers
  is: comparing((a, b) => a == b),
  // biome-ignore lint/suspicious/noDoubleEquals: `isnt` is the loose comparison of handlebars-helpers
  isnt: comparing((a, b) => a != b),
  gt: comparing((a, b) => num(a) > num(b)),
  gte: comparing((a, b) => num(a) >= num(b)),
  lt: comparing((a, b) => num(a) < num(b)),
  lte: comparing((a, b) => num(a) <= num(b)),
  compare: comparing(compareWith),
  and: comparing((...v) => v.every(truthy)),
  or: comparing((...v) => v.some(truthy)),
  not: comparing((v) => !truthy(v)),
  neither: comparing((a, b) => !truthy(a) && !truthy(b)),
  isTruthy: comparing(truthy),
  isFalsey: comparing((v) => !truthy(v)),
  contains: comparing(contains),
  has: comparing(has),
  ifEven: comparing((n) => num(n) % 2 === 0),
  ifOdd: comparing((n) => Math.abs(num(n) % 2) === 1),
  ifNth: comparing((a, b) => num(b) % num(a) === 0),
  unlessEq: comparing((a, b) => a === b, true),
  unlessGt: comparing((a, b) => num(a) > num(b), true),
  unlessGteq: comparing((a, b) => num(a) >= num(b), true),
  unlessLt: comparing((a, b) => num(a) < num(b), true),
  unlessLteq: comparing((a, b) => num(a) <= num(b), true),
  default: (...args) => splitOptions(args).values.find((v) => v !== null && v !== undefined) ?? '',
};

function nowOf(options: Options): moment.Moment {
  const now = (options.data as { now?: number } | undefined)?.now ?? Date.now();
  return moment.utc(now);
}

const UNIT = '(second|minute|hour|day|week|month|year)s?';
const AGO = new RegExp(`^(\\d+|an?) ${UNIT} ago$`);
const IN = new RegExp(`^in (\\d+|an?) ${UNIT}$`);
const LAST_NEXT = new RegExp(`^(last|next) ${UNIT}$`);
const DAYS: Record<string, number> = { today: 0, now: 0, yesterday: -1, tomorrow: 1 };

/** Reads "2026-07-24", an ISO timestamp, or a phrase: today, yesterday, tomorrow, 2 days ago, in 3 hours, last week. */
export function readDate(text: string, now: moment.Moment): moment.Moment {
  const phrase = text.trim().toLowerCase();
  const day = DAYS[phrase];
  if (day !== undefined) return now.clone().add(day, 'days');
  const relative = AGO.exec(phrase) ?? IN.exec(phrase) ?? LAST_NEXT.exec(phrase);
  if (relative?.[1] && relative[2]) {
    const amount = /^\d+$/.test(relative[1]) ? Number(relative[1]) : 1;
    const sign = relative[0].endsWith(' ago') || relative[1] === 'last' ? -1 : 1;
    return now.clone().add(sign * amount, relative[2] as moment.unitOfTime.DurationConstructor);
  }
  const parsed = moment.utc(text, moment.ISO_8601, true);
  if (!parsed.isValid())
    throw new Error(
      `date: cannot read ${JSON.stringify(text)} as a date; use an ISO date or a phrase such as "2 days ago"`,
    );
  return parsed;
}

/** `{{date}}`, `{{date "YYYY-MM-DD"}}`, `{{date "2026-07-24" "MMMM DD, YYYY"}}`, `{{moment "2 days ago" "X"}}`. */
function formatDate(...args: unknown[]): string {
  const { values, options } = splitOptions<string[]>(args);
  const now = nowOf(options);
  if (values.length === 0) return now.format('MMMM DD, YYYY');
  if (values.length === 1) return now.format(String(values[0]));
  return readDate(String(values[0]), now).format(String(values[1]));
}

function tagValue(tags: unknown, key: unknown, ...rest: unknown[]): string {
  const fallback = rest.length > 1 ? String(rest[0]) : '';
  const list = Array.isArray(tags) ? tags.map(String) : [];
  const tag = list.find((t) => t.startsWith(`${key}:`) || t.startsWith(`${key}=`));
  return tag === undefined ? fallback : tag.slice(String(key).length + 1);
}

export const VENDOR_HELPERS: Record<string, Helper> = {
  $UUID: () => randomUUID(),
  $RANDOM_NUMBER: () => randomInt(0, 10_001),
  tagValue,
  startsWith: comparing((value, prefix) => String(value ?? '').startsWith(String(prefix))),
  replace: (value, from, to) => String(value ?? '').replace(String(from), () => String(to)),
  split: (value, separator, index) => String(value ?? '').split(String(separator))[num(index)] ?? '',
  year: (...args) => {
    const { values, options } = splitOptions(args);
    return values[0] === 2 ? nowOf(options).format('YY') : nowOf(options).format('YYYY');
  },
  date: formatDate,
  moment: formatDate,
};

/**
 * Outpost's own: `{{json X}}` writes X as a JSON value, quotes and escapes included and nothing
 * HTML-escaped, so a check name with a quote neither breaks a JSON body nor shows as `&quot;`.
 */
export const OUTPOST_HELPERS: Record<string, Helper> = {
  json: (value) => new Handlebars.SafeString(JSON.stringify(value ?? null)),
};

export function registerTemplateHelpers(env: typeof Handlebars): void {
  const helpers = { ...COMPARISON_HELPERS, ...VENDOR_HELPERS, ...OUTPOST_HELPERS };
  for (const [name, helper] of Object.entries(helpers)) env.registerHelper(name, helper);
}
