/**
 * Assertions as a job carries them and as a result reports them. Every check type has its own
 * sources and comparisons (these `as const` lists are the one place they are named: the job's
 * schemas and the API's take them from here) and shares the property/target/regex fields.
 */
import { type Static, type TObject, type TProperties, Type } from 'typebox';
import { Nullable } from './schema.ts';

export const ASSERTION_SOURCES = ['STATUS_CODE', 'JSON_BODY', 'HEADERS', 'TEXT_BODY', 'RESPONSE_TIME'] as const;
/**
 * Outpost's own API assertion sources (the reference has none for these): values the result already
 * records, the HTTP version, the TLS protocol version and the certificate's days remaining.
 */
export const API_PROTOCOL_ASSERTION_SOURCES = [
  'HTTP_VERSION',
  'TLS_VERSION',
  'SSL_CERTIFICATE_DAYS_REMAINING',
] as const;
/** Every source an API check's assertion may use: the reference's and Outpost's own. */
export const API_ASSERTION_SOURCES = [...ASSERTION_SOURCES, ...API_PROTOCOL_ASSERTION_SOURCES] as const;
export type AssertionSource = (typeof API_ASSERTION_SOURCES)[number];
/** The comparisons a protocol source takes: its value is a version or a number (or null without TLS). */
export const API_PROTOCOL_ASSERTION_COMPARISONS = [
  'EQUALS',
  'NOT_EQUALS',
  'GREATER_THAN',
  'LESS_THAN',
  'IS_NULL',
  'NOT_NULL',
] as const;

const EQUALITY_COMPARISONS = ['EQUALS', 'NOT_EQUALS'] as const;
/** The comparisons that test an object's keys and values. */
const KEY_VALUE_COMPARISONS = ['HAS_KEY', 'NOT_HAS_KEY', 'HAS_VALUE', 'NOT_HAS_VALUE'] as const;
const VALUE_COMPARISONS = [
  'IS_EMPTY',
  'NOT_EMPTY',
  'GREATER_THAN',
  'LESS_THAN',
  'CONTAINS',
  'NOT_CONTAINS',
  'IS_NULL',
  'NOT_NULL',
] as const;

export const ASSERTION_COMPARISONS = [...EQUALITY_COMPARISONS, ...KEY_VALUE_COMPARISONS, ...VALUE_COMPARISONS] as const;
/** Every comparison but the key/value ones, in the same order: the reference's ICMP assertions take these. */
export const ASSERTION_COMPARISONS_WITHOUT_KEY_VALUE = [...EQUALITY_COMPARISONS, ...VALUE_COMPARISONS] as const;
export type AssertionComparison = (typeof ASSERTION_COMPARISONS)[number];

/** An assertion of a check type with these sources and comparisons, as a job carries it. */
export function assertionOf<S extends string, C extends string>(sources: readonly S[], comparisons: readonly C[]) {
  return Type.Object({
    source: Type.Enum(sources),
    comparison: Type.Enum(comparisons),
    property: Type.String(),
    target: Type.String(),
    regex: Type.Optional(Nullable(Type.String())),
  });
}

/** An assertion of any check type: its own sources and comparisons, the shared property/target/regex. */
export type AssertionOf<S extends string, C extends string = AssertionComparison> = Static<
  ReturnType<typeof assertionOf<S, C>>
>;

/** An API check's assertion. */
export const Assertion = assertionOf(API_ASSERTION_SOURCES, ASSERTION_COMPARISONS);
export type Assertion = Static<typeof Assertion>;

/** What a result adds to each assertion: what was seen and whether it held. */
const evaluationProperties = {
  actual: Type.Unknown(),
  passed: Type.Boolean(),
  /** Set when the assertion could not be evaluated at all (bad JSONPath, bad regex). */
  error: Type.Optional(Type.String()),
};

/** One evaluated assertion in a result: the definition plus what was seen and whether it held. */
export function evaluated<P extends TProperties>(assertion: TObject<P>) {
  return Type.Object({ ...assertion.properties, ...evaluationProperties });
}
const EvaluationFields = Type.Object(evaluationProperties);
export type EvaluatedAssertion<A> = A & Static<typeof EvaluationFields>;

export const AssertionResult = evaluated(Assertion);
export type AssertionResult = Static<typeof AssertionResult>;
