/** ICMP checks (reference: ChecksV1IcmpMonitorCreate, ChecksV1IcmpRequest, ChecksV1IcmpAssertion). */
import { type Static, Type } from 'typebox';
import { ASSERTION_COMPARISONS_WITHOUT_KEY_VALUE, assertionOf, evaluated } from './assertions.ts';
import { checkDefinition, IpFamily, responseTimeThresholds } from './common.ts';
import { Nullable } from './schema.ts';

export const ICMP_ASSERTION_SOURCES = ['LATENCY', 'JSON_RESPONSE'] as const;
export type IcmpAssertionSource = (typeof ICMP_ASSERTION_SOURCES)[number];
export const ICMP_ASSERTION_COMPARISONS = ASSERTION_COMPARISONS_WITHOUT_KEY_VALUE;
export type IcmpAssertionComparison = (typeof ICMP_ASSERTION_COMPARISONS)[number];
/** LATENCY assertions name the statistic in `property`: avg, min, max or stdDev (milliseconds). */
export const ICMP_LATENCY_PROPERTIES = ['avg', 'min', 'max', 'stdDev'] as const;
export type IcmpLatencyProperty = (typeof ICMP_LATENCY_PROPERTIES)[number];
export const IcmpAssertion = assertionOf(ICMP_ASSERTION_SOURCES, ICMP_ASSERTION_COMPARISONS);
export type IcmpAssertion = Static<typeof IcmpAssertion>;

export const ICMP_PING_COUNT = { min: 1, max: 50, default: 10 } as const;

export const IcmpRequest = Type.Object({
  hostname: Type.String(),
  ipFamily: IpFamily,
  /** Echo requests per run, 1 to 50. */
  pingCount: Type.Number(),
  assertions: Type.Array(IcmpAssertion),
});
export type IcmpRequest = Static<typeof IcmpRequest>;

export const IcmpCheckDefinition = checkDefinition('ICMP', {
  request: IcmpRequest,
  ...responseTimeThresholds,
  /** Packet loss in percent (0 < x <= 100) at or above which the run is degraded. */
  degradedPacketLossThreshold: Type.Number(),
  /** Packet loss in percent (0 < x <= 100) at or above which the run fails. */
  maxPacketLossThreshold: Type.Number(),
});
export type IcmpCheckDefinition = Static<typeof IcmpCheckDefinition>;

/** `details.icmpCheckResult`. Times are milliseconds, loss is percent. */
export const IcmpCheckResult = Type.Object({
  request: Type.Object({ hostname: Type.String(), ipFamily: IpFamily, pingCount: Type.Number() }),
  response: Nullable(
    Type.Object({
      resolvedIp: Type.String(),
      family: IpFamily,
      packetsSent: Type.Number(),
      packetsReceived: Type.Number(),
      packetLoss: Type.Number(),
      /** Null when no reply came back. */
      latency: Nullable(
        Type.Object({ min: Type.Number(), max: Type.Number(), avg: Type.Number(), stdDev: Type.Number() }),
      ),
      /** One entry per echo request; rtt is null for a lost one. */
      pings: Type.Array(
        Type.Object({
          sequence: Type.Number(),
          rtt: Nullable(Type.Number()),
          ttl: Type.Optional(Nullable(Type.Number())),
        }),
      ),
    }),
  ),
  assertions: Type.Array(evaluated(IcmpAssertion)),
  requestError: Nullable(Type.String()),
});
export type IcmpCheckResult = Static<typeof IcmpCheckResult>;
