/**
 * Rules for assertion targets and regexes that JSON Schema cannot express, checked when a check or a
 * group is written so a check that could only ever fail its assertion is a 400 naming the field
 * instead (docs/api.md "Validation"). They follow the agent's assertion engine
 * (src/agent/checks/api/assertions.ts):
 *  - GREATER_THAN / LESS_THAN compare numbers only: their target must be a number;
 *  - on a numeric source (STATUS_CODE, RESPONSE_TIME, LATENCY) EQUALS / NOT_EQUALS need a number too,
 *    and HAS_KEY / NOT_HAS_KEY / HAS_VALUE / NOT_HAS_VALUE (which need an object) cannot apply;
 *  - IS_EMPTY / NOT_EMPTY / IS_NULL / NOT_NULL take no target; HEADERS, JSON_BODY, TEXT_BODY and the
 *    other sources' targets are free text;
 *  - an ICMP LATENCY assertion names its statistic in `property` (avg, min, max, stdDev);
 *  - a regex must compile (`pattern` or `/pattern/flags`).
 *  - an SSL monitor's CONNECTION tlsVersion takes a version (TLS1.2) as a numeric target.
 *  - Outpost's API sources HTTP_VERSION, TLS_VERSION and SSL_CERTIFICATE_DAYS_REMAINING take only
 *    EQUALS, NOT_EQUALS, GREATER_THAN, LESS_THAN, IS_NULL and NOT_NULL; their targets are an HTTP
 *    version (1.0, 1.1, 2, 3), a TLS version (TLS1.2, TLSv1.3, 1.2) and a whole number of days.
 * A target holding a `{{VARIABLE}}` placeholder is resolved at run time, so it is not checked here.
 */
import { compileAssertionRegex } from '../../shared/checks/regex.ts';
import { API_PROTOCOL_ASSERTION_COMPARISONS, ICMP_LATENCY_PROPERTIES } from '../../shared/checks/types.ts';
import { BadRequestError } from '../http/errors.ts';

export interface AssertionInput {
  source: string;
  comparison: string;
  property?: string;
  target?: string;
  regex?: string | null;
}

const NUMERIC_SOURCES = new Set(['STATUS_CODE', 'RESPONSE_TIME', 'LATENCY']);
const NUMERIC_COMPARISONS = new Set(['GREATER_THAN', 'LESS_THAN']);
const EQUALITY = new Set(['EQUALS', 'NOT_EQUALS']);
const NEEDS_OBJECT = new Set(['HAS_KEY', 'NOT_HAS_KEY', 'HAS_VALUE', 'NOT_HAS_VALUE']);
const PLACEHOLDER = /\{\{\{?[^{}]+\}?\}\}/;
const NO_TARGET = new Set(['IS_EMPTY', 'NOT_EMPTY', 'IS_NULL', 'NOT_NULL']);

/** Outpost's protocol sources of API checks: what a target must look like, and how to say so. */
const PROTOCOL_TARGETS: Record<string, { test: (t: string) => boolean; want: string }> = {
  HTTP_VERSION: {
    test: (t) => /^(?:HTTP\/)?(?:1\.0|1\.1|2(?:\.0)?|3(?:\.0)?)$/i.test(t),
    want: 'an HTTP version (1.0, 1.1, 2 or 3)',
  },
  TLS_VERSION: {
    test: (t) => /^(?:TLS\s*v?)?1(?:\.[0-3])?$/i.test(t),
    want: 'a TLS version (TLS1.0 to TLS1.3, TLSv1.2 or 1.2)',
  },
  SSL_CERTIFICATE_DAYS_REMAINING: { test: (t) => /^-?\d+$/.test(t), want: 'a whole number of days' },
};

/** A 400 for a comparison or target an Outpost protocol source cannot take; undefined when fine. */
function protocolProblem(at: string, a: AssertionInput): string | undefined {
  const rule = PROTOCOL_TARGETS[a.source];
  if (!rule) return undefined;
  if (!(API_PROTOCOL_ASSERTION_COMPARISONS as readonly string[]).includes(a.comparison)) {
    return `${at}/comparison must be one of ${API_PROTOCOL_ASSERTION_COMPARISONS.join(', ')} for ${a.source}, got ${a.comparison}`;
  }
  const target = (a.target ?? '').trim();
  if (NO_TARGET.has(a.comparison) || PLACEHOLDER.test(target) || rule.test(target)) return undefined;
  return `${at}/target must be ${rule.want} for ${a.source}, got "${target.slice(0, 100)}"`;
}

/** As the agent reads a numeric target: trimmed, non-empty, a finite number. */
function isNumeric(text: string): boolean {
  const trimmed = text.trim();
  return trimmed !== '' && Number.isFinite(Number(trimmed));
}

/** The error's message when the regex does not compile as the agent compiles it. */
function regexProblem(source: string): string | undefined {
  try {
    compileAssertionRegex(source);
    return undefined;
  } catch (error) {
    return error instanceof Error ? error.message : String(error);
  }
}

function targetProblem(a: AssertionInput): string | undefined {
  const target = a.target ?? '';
  // Outpost's protocol sources have their own target rules (protocolProblem).
  if (PLACEHOLDER.test(target) || a.source in PROTOCOL_TARGETS) return undefined;
  // An SSL monitor's tlsVersion compares in order: TLS1.2 is a fine target for GREATER_THAN.
  if (
    a.source === 'CONNECTION' &&
    (a.property ?? '').trim() === 'tlsVersion' &&
    /^TLS\s*v?1\.[0-3]$/i.test(target.trim())
  )
    return undefined;
  const numericSource = NUMERIC_SOURCES.has(a.source);
  if (NUMERIC_COMPARISONS.has(a.comparison) || (numericSource && EQUALITY.has(a.comparison))) {
    if (!isNumeric(target)) return `must be a number for ${a.source} ${a.comparison}, got "${target.slice(0, 100)}"`;
  }
  return undefined;
}

/** Throws a 400 naming the first assertion field that cannot work, e.g. `body/request/assertions/0/target`. */
export function assertAssertionsUsable(field: string, assertions: readonly AssertionInput[] | undefined): void {
  for (const [index, a] of (assertions ?? []).entries()) {
    const at = `${field}/${index}`;
    const protocol = protocolProblem(at, a);
    if (protocol) throw new BadRequestError(protocol);
    if (NUMERIC_SOURCES.has(a.source) && NEEDS_OBJECT.has(a.comparison)) {
      throw new BadRequestError(`${at}/comparison ${a.comparison} needs an object, and ${a.source} is a number`);
    }
    if (a.source === 'LATENCY' && !(ICMP_LATENCY_PROPERTIES as readonly string[]).includes((a.property ?? '').trim())) {
      throw new BadRequestError(
        `${at}/property must be one of ${ICMP_LATENCY_PROPERTIES.join(', ')} for LATENCY, got "${(a.property ?? '').slice(0, 100)}"`,
      );
    }
    const target = targetProblem(a);
    if (target) throw new BadRequestError(`${at}/target ${target}`);
    const regex = a.regex ? regexProblem(a.regex) : undefined;
    if (regex) throw new BadRequestError(`${at}/regex must be a valid regular expression: ${regex}`);
  }
}
