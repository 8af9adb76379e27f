/**
 * The rule for every URL the API stores to be fetched or linked later (API check URLs, a group's
 * apiCheckDefaults.url, a status page's logo, logoDark, favicon and redirectTo): http or https only,
 * and parsable by the WHATWG URL parser, so a `javascript:` link, a `file:` path or a malformed
 * address is a 400 naming the field at write time rather than a failure at run time.
 *
 * API check URLs may hold the `{{VAR}}` / `{{{VAR}}}` placeholders the agent substitutes at run
 * time. They are checked with each placeholder replaced by a harmless host-safe token; a URL that
 * begins with a placeholder (`{{BASE_URL}}/health`) takes its scheme from the variable, so only its
 * remainder can be checked here and the scheme is the agent's to refuse at run time.
 */
import { BadRequestError } from '../http/errors.ts';

/** `{{NAME}}` or `{{{NAME}}}`, as the agent's substitution reads them. */
const PLACEHOLDER = /\{\{\{?[^{}]+\}?\}\}/g;
const LEADING_PLACEHOLDER = /^\{\{\{?[^{}]+\}?\}\}/;
const HTTP_SCHEME = /^https?:\/\//i;
const ANY_SCHEME = /^[a-z][a-z\d+.-]*:/i;

/** A port placeholder (after `host:`) stands in as a number, any other as a letter, which parses anywhere else. */
function standIn(_match: string, offset: number, whole: string): string {
  return whole[offset - 1] === ':' && whole[offset - 2] !== '/' && !whole.startsWith('//', offset) ? '1' : 'x';
}

export interface HttpUrlRule {
  /** Whether `{{VAR}}` placeholders may appear (API check URLs: yes; status page links: no). */
  placeholders: boolean;
  /** What the value becomes before it is used (a group check's URL on the group's base), checked instead. */
  resolved?: string;
}

/** Why `value` is not an acceptable http(s) URL, or undefined when it is. */
export function httpUrlProblem(value: string, rule: HttpUrlRule): string | undefined {
  let candidate = value.trim();
  if (rule.placeholders) {
    // The variable supplies scheme and host: check the rest against a stand-in base.
    candidate = candidate.replace(LEADING_PLACEHOLDER, 'https://placeholder.invalid').replace(PLACEHOLDER, standIn);
  }
  if (!HTTP_SCHEME.test(candidate)) return 'must be an http:// or https:// URL';
  if (!URL.canParse(candidate)) return 'must be a valid URL';
  return undefined;
}

/** Throws a 400 naming `field` (e.g. `body/request/url`) when `value` is not an http(s) URL. */
export function assertHttpUrl(field: string, value: string, rule: HttpUrlRule): void {
  // A scheme of its own is never joined to a base URL: `javascript:x` is refused in a group too.
  const foreignScheme = ANY_SCHEME.test(value.trim()) && !HTTP_SCHEME.test(value.trim());
  const problem = foreignScheme ? 'must be an http:// or https:// URL' : httpUrlProblem(rule.resolved ?? value, rule);
  if (problem) {
    const placeholders = rule.placeholders ? ' ({{VARIABLE}} placeholders allowed)' : '';
    throw new BadRequestError(`${field} ${problem}${placeholders}, got "${value.slice(0, 200)}"`);
  }
}

/** assertHttpUrl for an optional value: null, undefined and '' mean "none" and pass. */
export function assertOptionalHttpUrl(field: string, value: string | null | undefined, rule: HttpUrlRule): void {
  if (value !== null && value !== undefined && value !== '') assertHttpUrl(field, value, rule);
}
