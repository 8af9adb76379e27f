/**
 * The assertion engine of API checks: pure, synchronous, and total — whatever the assertions and the
 * response, it returns one result per assertion and never throws. An assertion that cannot be
 * evaluated (bad JSONPath, bad regex, a comparison that makes no sense for the value, a JSON_BODY
 * assertion on a body that is not JSON) fails with `error` saying why.
 *
 * Sources (what `actual` is), with what `property` and `regex` mean for each, as the reference's
 * docs and CLI use them (docs/checks.md "Assertions" has the table):
 *  - STATUS_CODE: the status code (number). RESPONSE_TIME: the total response time in ms (number).
 *    Both are measurements: `property` and `regex` are not used. So are Outpost's own sources:
 *    HTTP_VERSION ('1.1' or '2', compared as numbers), TLS_VERSION (Node's `TLSv1.3`; compared as
 *    the version number, so TLS1.2, TLSv1.2 and 1.2 are the same target; null over http) and
 *    SSL_CERTIFICATE_DAYS_REMAINING (whole days until the certificate expires; null over http).
 *  - HEADERS: `property` names a header (case-insensitive); its value, joined with ', ' when
 *    repeated, or undefined when absent. An empty `property` means the whole header map.
 *    HAS_KEY / NOT_HAS_KEY test for the header named by `target` (or, if empty, by `property`).
 *  - TEXT_BODY: the body text; a non-empty `property` is a regular expression over it (the
 *    reference's CLI puts it there: textBody('<!doctype (.{4})')).
 *  - JSON_BODY: the body parsed as JSON, then `property` as a JSONPath (`$.data[0].id`); empty or
 *    `$` is the whole document, a path without `$` is read as if it began with `$.`. No match is
 *    undefined, one match is its value, several matches are an array of them.
 *  A regular expression (in TEXT_BODY's `property`, or in `regex` for HEADERS, TEXT_BODY and
 *  JSON_BODY, applied after `property`) turns the value into its first capture group, or the whole
 *  match without one; no match gives undefined. `/re/flags` is accepted for flags; `g` is dropped.
 *
 * Comparisons (`target` is always a string, read according to `actual`):
 *  - EQUALS / NOT_EQUALS: numerically when both sides read as numbers (`"200"` equals 200, `"1.0"`
 *    equals 1); a JSON value (object/array) equals a target that parses to a deeply equal value;
 *    null equals "null"; booleans compare as "true"/"false"; strings exactly. Undefined (nothing
 *    found) equals nothing.
 *  - GREATER_THAN / LESS_THAN: numbers only; otherwise an error.
 *  - CONTAINS / NOT_CONTAINS: substring of a string (numbers and booleans as their text), element of
 *    an array (by EQUALS), substring of a JSON object's text. Nothing found contains nothing.
 *  - HAS_KEY / NOT_HAS_KEY: own key of an object (the value must be an object; else an error).
 *  - HAS_VALUE / NOT_HAS_VALUE: an element of an array or a value of an object equals the target
 *    (by EQUALS); the value must be an array or object, else an error.
 *  - IS_EMPTY / NOT_EMPTY: empty are '', [], {}, null and undefined (nothing found).
 *  - IS_NULL / NOT_NULL: null or undefined (nothing found) is null.
 */
import { isDeepStrictEqual } from 'node:util';
import { JSONPath } from 'jsonpath-plus';
import { compileAssertionRegex } from '../../../shared/checks/regex.ts';
import type {
  Assertion,
  AssertionComparison,
  AssertionOf,
  AssertionResult,
  EvaluatedAssertion,
} from '../../../shared/checks/types.ts';

/** What assertions are evaluated against. */
export interface AssertableResponse {
  status: number;
  /** Lower-case names. */
  headers: Record<string, string>;
  body: string;
  /** Total response time in ms. */
  responseTime: number;
  /** The HTTP version of the last hop: '2' or '1.1' (absent: '1.1'). */
  httpVersion?: string;
  /** The last hop's TLS session and certificate; null or absent over plain http. */
  tls?: { protocol?: string | null; daysRemaining: number | null } | null;
}

/** Actual values longer than this (as JSON) are cut in results, which are stored for every run. */
export const ACTUAL_PREVIEW_CHARS = 4096;

/** An assertion that cannot be evaluated; its message becomes the result's `error`. */
export class AssertionError extends Error {}

type Json = null | boolean | number | string | Json[] | { [k: string]: Json };

function isPlainObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** A finite number for numbers and numeric strings, else undefined. */
export function asNumber(v: unknown): number | undefined {
  if (typeof v === 'number') return Number.isFinite(v) ? v : undefined;
  if (typeof v === 'string') {
    const t = v.trim();
    if (t === '') return undefined;
    const n = Number(t);
    return Number.isFinite(n) ? n : undefined;
  }
  return undefined;
}

function parseJson(text: string): { ok: true; value: unknown } | { ok: false } {
  try {
    return { ok: true, value: JSON.parse(text) as unknown };
  } catch {
    return { ok: false };
  }
}

/** EQUALS for one value against the target text (see the module comment). */
export function valueEquals(actual: unknown, target: string): boolean {
  if (actual === undefined) return false;
  const a = asNumber(actual);
  const t = asNumber(target);
  if (a !== undefined && t !== undefined) return a === t;
  if (actual === null) return target.trim() === 'null';
  if (typeof actual === 'boolean') return String(actual) === target.trim();
  if (typeof actual === 'string') return actual === target;
  if (typeof actual === 'number') return String(actual) === target;
  if (typeof actual === 'object') {
    const parsed = parseJson(target);
    if (parsed.ok) return isDeepStrictEqual(actual, parsed.value);
    return safeStringify(actual) === target;
  }
  return false;
}

function safeStringify(v: unknown): string {
  try {
    return JSON.stringify(v) ?? String(v);
  } catch {
    return String(v);
  }
}

function describeType(v: unknown): string {
  if (v === undefined) return 'nothing (not found)';
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'an array';
  return `a ${typeof v}`;
}

function compare(comparison: AssertionComparison, actual: unknown, target: string): boolean {
  switch (comparison) {
    case 'EQUALS':
      return valueEquals(actual, target);
    case 'NOT_EQUALS':
      return !valueEquals(actual, target);
    case 'GREATER_THAN':
    case 'LESS_THAN': {
      const a = asNumber(actual);
      const t = asNumber(target);
      if (a === undefined)
        throw new AssertionError(`${comparison} needs a number, the value is ${describeType(actual)}`);
      if (t === undefined) throw new AssertionError(`${comparison} needs a numeric target, got "${target}"`);
      return comparison === 'GREATER_THAN' ? a > t : a < t;
    }
    case 'CONTAINS':
    case 'NOT_CONTAINS': {
      let has: boolean;
      if (actual === undefined || actual === null) has = false;
      else if (Array.isArray(actual)) has = actual.some((x) => valueEquals(x, target));
      else if (typeof actual === 'object') has = safeStringify(actual).includes(target);
      else has = String(actual).includes(target);
      return comparison === 'CONTAINS' ? has : !has;
    }
    case 'HAS_KEY':
    case 'NOT_HAS_KEY': {
      if (!isPlainObject(actual))
        throw new AssertionError(`${comparison} needs an object, the value is ${describeType(actual)}`);
      const has = Object.hasOwn(actual, target);
      return comparison === 'HAS_KEY' ? has : !has;
    }
    case 'HAS_VALUE':
    case 'NOT_HAS_VALUE': {
      let values: unknown[];
      if (Array.isArray(actual)) values = actual;
      else if (isPlainObject(actual)) values = Object.values(actual);
      else throw new AssertionError(`${comparison} needs an array or object, the value is ${describeType(actual)}`);
      const has = values.some((x) => valueEquals(x, target));
      return comparison === 'HAS_VALUE' ? has : !has;
    }
    case 'IS_EMPTY':
    case 'NOT_EMPTY': {
      const empty =
        actual === undefined ||
        actual === null ||
        actual === '' ||
        (Array.isArray(actual) && actual.length === 0) ||
        (isPlainObject(actual) && Object.keys(actual).length === 0);
      return comparison === 'IS_EMPTY' ? empty : !empty;
    }
    case 'IS_NULL':
    case 'NOT_NULL': {
      const isNull = actual === undefined || actual === null;
      return comparison === 'IS_NULL' ? isNull : !isNull;
    }
    default:
      throw new AssertionError(`unknown comparison "${String(comparison)}"`);
  }
}

/**
 * Compiles `pattern` or `/pattern/flags`; throws AssertionError naming `field` (the assertion's
 * property or regex) for an invalid one.
 */
export function compileRegex(source: string, field: 'property' | 'regex' = 'regex'): RegExp {
  try {
    return compileAssertionRegex(source);
  } catch (err) {
    throw new AssertionError(
      `${field}: invalid regular expression "${source}": ${err instanceof Error ? err.message : String(err)}`,
    );
  }
}

/** The first capture group of `regex` in the value's text (or the whole match); undefined when none. */
function matchRegex(value: unknown, regex: string, field: 'property' | 'regex'): unknown {
  const re = compileRegex(regex, field);
  if (value === undefined) return undefined;
  const text = typeof value === 'string' ? value : safeStringify(value);
  const m = re.exec(text);
  if (!m) return undefined;
  return m.length > 1 && m[1] !== undefined ? m[1] : m[0];
}

/** Sources whose value is a measurement (a number): `property` and `regex` do not apply to them. */
const MEASUREMENT_SOURCES: ReadonlySet<string> = new Set([
  'STATUS_CODE',
  'RESPONSE_TIME',
  'HTTP_VERSION',
  'TLS_VERSION',
  'SSL_CERTIFICATE_DAYS_REMAINING',
]);

/** `TLSv1.3` (Node's spelling), `TLS1.3` (the reference's) or `1.3` as the number 1.3; undefined otherwise. */
export function tlsVersionOf(v: unknown): number | undefined {
  // Node says `TLSv1` for 1.0.
  const m = /^(?:TLS\s*v?)?(1(?:\.[0-3])?)$/i.exec(String(v ?? '').trim());
  return m ? Number(m[1]) : undefined;
}

/** Sources with no value over plain http. */
const TLS_SOURCES: ReadonlySet<string> = new Set(['TLS_VERSION', 'SSL_CERTIFICATE_DAYS_REMAINING']);

/** A TLS_VERSION assertion compares version numbers; the result keeps the protocol name as seen. */
function compareTlsVersion(a: Assertion, protocol: unknown, target: string): boolean {
  if (a.comparison === 'IS_NULL' || a.comparison === 'NOT_NULL') return compare(a.comparison, protocol, target);
  const wanted = tlsVersionOf(target);
  if (wanted === undefined)
    throw new AssertionError(`TLS_VERSION needs a version target (TLS1.2, TLSv1.3, 1.2), got "${target}"`);
  return compare(a.comparison, tlsVersionOf(protocol) ?? String(protocol), String(wanted));
}

/** The assertion's `regex` applied to what its source and `property` selected (see the module comment). */
function applyRegexField(value: unknown, a: AssertionOf<string, string>): unknown {
  if (MEASUREMENT_SOURCES.has(a.source) || typeof a.regex !== 'string' || a.regex === '') return value;
  return matchRegex(value, a.regex, 'regex');
}

/**
 * What a regular expression in `property` picks from a text (TEXT_BODY; TCP's RESPONSE_DATA): its
 * first capture group or whole match, undefined without a match; an empty `property`, the whole text.
 */
export function selectText(text: string, property: unknown): unknown {
  return typeof property === 'string' && property !== '' ? matchRegex(text, property, 'property') : text;
}

/** Normalises a user's JSON path: '' and '$' select the whole document; `a.b` means `$.a.b`. */
function normalisePath(property: string): string {
  const p = property.trim();
  if (p === '' || p === '$') return '$';
  if (p.startsWith('$')) return p;
  if (p.startsWith('[')) return `$${p}`;
  return `$.${p}`;
}

/** `property` as a JSONPath into `doc` (see the module comment); throws AssertionError for a bad path. */
export function selectJson(doc: unknown, property: string): unknown {
  const path = normalisePath(property);
  if (path === '$') return doc;
  let found: unknown;
  try {
    // 'safe' evaluates filter expressions (?(@.x > 1)) in jsonpath-plus's own sandboxed
    // interpreter, never with eval: the path comes from a check definition, not from us.
    found = JSONPath({ path, json: doc as Json, wrap: true, eval: 'safe' });
  } catch (err) {
    throw new AssertionError(`invalid JSON path "${property}": ${err instanceof Error ? err.message : String(err)}`);
  }
  if (!Array.isArray(found) || found.length === 0) return undefined;
  return found.length === 1 ? found[0] : found;
}

interface Evaluation {
  /** Parsed JSON body, once per response. */
  json?: { ok: true; value: unknown } | { ok: false; message: string };
}

function jsonOf(res: AssertableResponse, ev: Evaluation): unknown {
  if (!ev.json) {
    try {
      ev.json = { ok: true, value: JSON.parse(res.body) as unknown };
    } catch (err) {
      ev.json = { ok: false, message: err instanceof Error ? err.message : String(err) };
    }
  }
  if (!ev.json.ok) throw new AssertionError(`the response body is not valid JSON (${ev.json.message})`);
  return ev.json.value;
}

function actualOf(a: Assertion, res: AssertableResponse, ev: Evaluation): unknown {
  const property = typeof a.property === 'string' ? a.property : '';
  switch (a.source) {
    case 'STATUS_CODE':
      return res.status;
    case 'RESPONSE_TIME':
      return res.responseTime;
    case 'HEADERS':
      return property.trim() === '' ? res.headers : res.headers[property.trim().toLowerCase()];
    case 'TEXT_BODY':
      return selectText(res.body, a.property);
    case 'JSON_BODY':
      return selectJson(jsonOf(res, ev), property);
    case 'HTTP_VERSION':
      return res.httpVersion ?? '1.1';
    case 'TLS_VERSION':
      return res.tls?.protocol ?? undefined;
    case 'SSL_CERTIFICATE_DAYS_REMAINING':
      return res.tls?.daysRemaining ?? undefined;
    default:
      throw new AssertionError(`unknown source "${String(a.source)}"`);
  }
}

/** Makes an actual value fit to store: undefined becomes null, long values are cut (as text). */
function preview(v: unknown): unknown {
  if (v === undefined) return null;
  if (typeof v === 'string') return v.length > ACTUAL_PREVIEW_CHARS ? `${v.slice(0, ACTUAL_PREVIEW_CHARS)}…` : v;
  if (typeof v === 'object' && v !== null) {
    const s = safeStringify(v);
    return s.length > ACTUAL_PREVIEW_CHARS ? `${s.slice(0, ACTUAL_PREVIEW_CHARS)}…` : v;
  }
  return v;
}

/** Why an assertion could not be evaluated: an AssertionError's own words, else what went wrong. */
function evaluationError(err: unknown): string {
  if (err instanceof AssertionError) return err.message;
  return `could not evaluate: ${err instanceof Error ? err.message : String(err)}`;
}

function evaluateOne(a: Assertion, res: AssertableResponse, ev: Evaluation): AssertionResult {
  let target = typeof a.target === 'string' ? a.target : a.target == null ? '' : String(a.target);
  // `HTTP/2` is the same target as `2`.
  if (a.source === 'HTTP_VERSION') target = target.trim().replace(/^HTTP\//i, '');
  let actual: unknown;
  try {
    actual = applyRegexField(actualOf(a, res, ev), a);
    // HAS_KEY on a header reads as "the response has this header".
    if (a.source === 'HEADERS' && (a.comparison === 'HAS_KEY' || a.comparison === 'NOT_HAS_KEY') && !a.regex) {
      const name = (target || a.property || '').trim().toLowerCase();
      const has = Object.hasOwn(res.headers, name);
      return { ...a, actual: preview(actual), passed: a.comparison === 'HAS_KEY' ? has : !has };
    }
    if (
      actual === undefined &&
      TLS_SOURCES.has(a.source) &&
      a.comparison !== 'IS_NULL' &&
      a.comparison !== 'NOT_NULL'
    ) {
      throw new AssertionError('the response came over plain HTTP: there is no TLS session or certificate');
    }
    if (a.source === 'TLS_VERSION')
      return { ...a, actual: preview(actual), passed: compareTlsVersion(a, actual, target) };
    return { ...a, actual: preview(actual), passed: compare(a.comparison, actual, target) };
  } catch (err) {
    return { ...a, actual: preview(actual), passed: false, error: evaluationError(err) };
  }
}

/** Evaluates every assertion against the response; one result each, in order. Never throws. */
export function evaluateAssertions(assertions: readonly Assertion[], response: AssertableResponse): AssertionResult[] {
  const ev: Evaluation = {};
  return (Array.isArray(assertions) ? assertions : []).map((a) => {
    try {
      return evaluateOne(a, response, ev);
    } catch (err) {
      // Only a malformed assertion object gets here (the definition was not validated).
      return { ...(a as Assertion), actual: null, passed: false, error: `invalid assertion: ${String(err)}` };
    }
  });
}

/**
 * The engine for other check types' assertions (TCP, DNS, ...): `actualOf` gives the value of an
 * assertion's source (throwing AssertionError when it cannot), then regex, comparison and preview
 * work as for API checks. One result per assertion, in order; never throws.
 */
export function evaluateAssertionsBy<A extends AssertionOf<string, string>>(
  assertions: readonly A[],
  actualOf: (a: A) => unknown,
): EvaluatedAssertion<A>[] {
  return (Array.isArray(assertions) ? assertions : []).map((a) => {
    const target = typeof a.target === 'string' ? a.target : a.target == null ? '' : String(a.target);
    let actual: unknown;
    try {
      actual = applyRegexField(actualOf(a), a);
      return { ...a, actual: preview(actual), passed: compare(a.comparison as AssertionComparison, actual, target) };
    } catch (err) {
      return { ...a, actual: preview(actual), passed: false, error: evaluationError(err) };
    }
  });
}

/** One line for a failed assertion, for the outcome's `error`. */
export function describeFailedAssertion(r: EvaluatedAssertion<AssertionOf<string, string>>): string {
  const where = r.property ? ` ${r.property}` : '';
  const expected = ['IS_EMPTY', 'NOT_EMPTY', 'IS_NULL', 'NOT_NULL'].includes(r.comparison)
    ? ''
    : ` ${JSON.stringify(r.target)}`;
  const head = `Assertion failed: ${r.source}${where} ${r.comparison}${expected}`;
  if (r.error) return `${head}: ${r.error}`;
  const shown = safeStringify(r.actual);
  return `${head} (actual: ${shown.length > 200 ? `${shown.slice(0, 200)}…` : shown})`;
}
