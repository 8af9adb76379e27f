/**
 * What a run's `details` carries beside its type's result (RunDetails in ../protocol.ts): how a name
 * was resolved, what shouldFail changed, unresolved variables, and the network diagnostics of an API
 * check that failed on the network. The agent writes these; the service stores and shows them.
 */
import { type Static, Type } from 'typebox';
import { IpFamily } from './common.ts';
import { Nullable } from './schema.ts';

/** How a name was resolved, reported in the result's details for diagnosis. */
export const ResolvedVia = Type.Enum(['literal', 'resolver', 'lookup']);
export type ResolvedVia = Static<typeof ResolvedVia>;

/** What shouldFail did to a run, kept in `details.shouldFail`. */
export const ShouldFailEffect = Type.Union([
  Type.Object({ excused: Type.String() }),
  Type.Object({ inverted: Type.Literal(true), reason: Nullable(Type.String()) }),
]);
export type ShouldFailEffect = Static<typeof ShouldFailEffect>;

/** One `{{...}}` reference sent as written: where it was, what it said, and why it was not replaced. */
export const VariableNote = Type.Object({
  /** The field of the check definition, e.g. `request.url` or `request.headers[0].value`. */
  field: Type.String(),
  /** The reference as written, braces included. */
  reference: Type.String(),
  message: Type.String(),
});
export type VariableNote = Static<typeof VariableNote>;

/** An address of the target an ICMP check could not send to, and the error code why. */
export const SkippedAddress = Type.Object({ address: Type.String(), family: IpFamily, code: Type.String() });
export type SkippedAddress = Static<typeof SkippedAddress>;

export const TracerouteHop = Type.Object({
  hop: Type.Number(),
  /** Addresses that answered at this distance (routers may balance between several). */
  addresses: Type.Array(Type.String()),
  /** One entry per probe: who answered and the round trip in ms, or null when none did. */
  probes: Type.Array(
    Nullable(Type.Object({ address: Type.String(), rtt: Type.Number(), annotation: Type.Optional(Type.String()) })),
  ),
  /** Percent of probes without an answer. */
  loss: Type.Number(),
  latency: Nullable(Type.Object({ min: Type.Number(), avg: Type.Number(), max: Type.Number() })),
});
export type TracerouteHop = Static<typeof TracerouteHop>;

/** A traceroute that ran; the field names follow the reference's CheckResultTraceroute.response. */
export const TracerouteResult = Type.Object({
  ran: Type.Literal(true),
  tool: Type.Literal('traceroute'),
  hostname: Type.String(),
  resolvedIp: Type.String(),
  protocol: IpFamily,
  probeProtocol: Type.Literal('UDP'),
  totalHops: Type.Number(),
  destinationReached: Type.Boolean(),
  finalHopLatency: TracerouteHop.properties.latency,
  hops: Type.Array(TracerouteHop),
  /** Set when the time limit cut the trace short. */
  truncationReason: Type.Optional(Type.String()),
  durationMs: Type.Number(),
});
export type TracerouteResult = Static<typeof TracerouteResult>;

export const TracerouteDetails = Type.Union([
  TracerouteResult,
  Type.Object({ ran: Type.Literal(false), reason: Type.String() }),
]);
export type TracerouteDetails = Static<typeof TracerouteDetails>;

export const PcapCaptured = Type.Object({
  captured: Type.Literal(true),
  format: Type.Literal('pcap'),
  /** Packet records in the capture (0: tcpdump listened, but nothing matching went by). */
  packets: Type.Number(),
  /** The capture file, base64, until results can carry artifacts (pcapDataUrl, issue 5). */
  base64: Type.String(),
  bytes: Type.Number(),
  truncated: Type.Boolean(),
  filter: Type.String(),
  /** What the retried connection did: connected, or the error code (ECONNREFUSED, timeout...). */
  retry: Type.Object({ address: Type.String(), port: Type.Number(), outcome: Type.String() }),
  durationMs: Type.Number(),
});
export type PcapCaptured = Static<typeof PcapCaptured>;
export const PcapNotCaptured = Type.Object({ captured: Type.Literal(false), reason: Type.String() });
export type PcapNotCaptured = Static<typeof PcapNotCaptured>;
export const PcapResult = Type.Union([PcapCaptured, PcapNotCaptured]);
export type PcapResult = Static<typeof PcapResult>;
