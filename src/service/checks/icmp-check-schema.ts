/**
 * The body of an ICMP check (the reference's ChecksV1IcmpMonitorCreate / ChecksV1IcmpMonitorUpdate),
 * as TypeBox schemas built from the shared pieces in common-check-schema.ts. Packet-loss thresholds
 * are percentages above 0 and at most 100.
 */
import { Type } from 'typebox';
import { ICMP_ASSERTION_COMPARISONS, ICMP_ASSERTION_SOURCES, ICMP_PING_COUNT } from '../../shared/checks/types.ts';
import { Nullable } from '../routes/schemas.ts';
import { assertionList, checkSchemas, type Mode, prop, required } from './common-check-schema.ts';

export const ICMP_DEFAULT_DEGRADED_RESPONSE_TIME_MS = 10000;
export const ICMP_DEFAULT_MAX_RESPONSE_TIME_MS = 20000;
export const ICMP_RESPONSE_TIME_MAX_MS = 300000;
export const ICMP_DEFAULT_DEGRADED_PACKET_LOSS = 10;
export const ICMP_DEFAULT_MAX_PACKET_LOSS = 20;

const packetLoss = (o: { default?: unknown }) => Nullable(Type.Number({ exclusiveMinimum: 0, maximum: 100 }), o);

function request(mode: Mode) {
  return Type.Object(
    {
      hostname: required(mode, Type.String({ minLength: 1, maxLength: 2048 })),
      ipFamily: prop(mode, (o) => Nullable(Type.Enum(['IPv4', 'IPv6']), o), 'IPv4'),
      pingCount: prop(
        mode,
        (o) => Nullable(Type.Integer({ minimum: ICMP_PING_COUNT.min, maximum: ICMP_PING_COUNT.max }), o),
        ICMP_PING_COUNT.default,
      ),
      assertions: assertionList(mode, ICMP_ASSERTION_SOURCES, ICMP_ASSERTION_COMPARISONS),
    },
    { additionalProperties: false },
  );
}

function icmpCheckProperties(mode: Mode) {
  return {
    degradedPacketLossThreshold: prop(mode, packetLoss, ICMP_DEFAULT_DEGRADED_PACKET_LOSS),
    maxPacketLossThreshold: prop(mode, packetLoss, ICMP_DEFAULT_MAX_PACKET_LOSS),
    request: required(mode, request(mode)),
  };
}

const LIMITS = {
  maximum: ICMP_RESPONSE_TIME_MAX_MS,
  degraded: ICMP_DEFAULT_DEGRADED_RESPONSE_TIME_MS,
  max: ICMP_DEFAULT_MAX_RESPONSE_TIME_MS,
};
/** The bodies of POST and PUT, and an ICMP check as GET returns it (ChecksV1IcmpMonitor). */
export const {
  create: IcmpCheckCreateBody,
  update: IcmpCheckUpdateBody,
  response: IcmpCheckResponse,
} = checkSchemas('ICMP', LIMITS, icmpCheckProperties);
