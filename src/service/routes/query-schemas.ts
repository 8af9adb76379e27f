/**
 * Query-string values that several routes take as the reference spells them: its check types and
 * the bounds and quick ranges of a time window (analytics.ts, reporting.ts, check-reads.ts).
 */
import { Type } from 'typebox';

/** The reference's check types; those this service lacks simply match nothing. */
export const REFERENCE_CHECK_TYPES = [
  'AGENTIC',
  'API',
  'BROWSER',
  'HEARTBEAT',
  'ICMP',
  'MULTI_STEP',
  'TCP',
  'PLAYWRIGHT',
  'TRACEROUTE',
  'URL',
  'DNS',
  'SSL',
  'GRPC',
] as const;

/** A quickRange's values: the reference spells the last 24 hours differently per API. */
export const quickRanges = <L extends string>(last24Hours: L) =>
  [last24Hours, 'last7Days', 'last30Days', 'thisWeek', 'thisMonth', 'lastWeek', 'lastMonth'] as const;

/** One of `values`, as a union of literals. */
export const literals = (values: readonly string[]) => Type.Union(values.map((v) => Type.Literal(v)));

const BOUND = 'UNIX timestamp in seconds or ISO 8601 date; overrides quickRange';

/** `from` and `to` of a window, either of which overrides a quickRange. */
export function windowBounds() {
  return {
    from: Type.Optional(Type.String({ maxLength: 40, description: `Start of the window (${BOUND}).` })),
    to: Type.Optional(Type.String({ maxLength: 40, description: `End of the window (${BOUND}).` })),
  };
}
