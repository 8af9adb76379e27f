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
 * A target holding a `{{VARIABLE}}` placeholder is resolved at run time, so it is not checked here.
 */
import { compileAssertionRegex } from '../../shared/checks/regex.ts';
import { ICMP_LATENCY_PROPERTIES } from '../../shared/checks/types.ts';
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
  if (PLACEHOLDER.test(target)) return undefined;
  // An SSL monitor's tlsVersion compares in order: TLS1.2 is a fine target for GREATER_THAN.
  if (a.source === 'CONNECTION' && (a.property ?? '').trim() === 'tlsVersion' && /^TLS\s*v?1\.[0-3]$/i.test(target.trim())) return undefined;
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
    if (NUMERIC_SOURCES.has(a.source) && NEEDS_OBJECT.has(a.comparison)) {
      throw new BadRequestError(`${at}/comparison ${a.comparison} needs an object, and ${a.source} is a number`);
    }
    if (a.source === 'LATENCY' && !(ICMP_LATENCY_PROPERTIES as readonly string[]).includes((a.property ?? '').trim())) {
      throw new BadRequestError(`${at}/property must be one of ${ICMP_LATENCY_PROPERTIES.join(', ')} for LATENCY, got "${(a.property ?? '').slice(0, 100)}"`);
    }
    const target = targetProblem(a);
    if (target) throw new BadRequestError(`${at}/target ${target}`);
    const regex = a.regex ? regexProblem(a.regex) : undefined;
    if (regex) throw new BadRequestError(`${at}/regex must be a valid regular expression: ${regex}`);
  }
}
