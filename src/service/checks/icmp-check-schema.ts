/**
 * The body of an ICMP check (the reference's ChecksV1IcmpMonitorCreate / ChecksV1IcmpMonitorUpdate).
 */
export const ICMP_DEFAULT_DEGRADED_RESPONSE_TIME_MS = 10000;
export const ICMP_DEFAULT_MAX_RESPONSE_TIME_MS = 20000;
export const ICMP_DEFAULT_DEGRADED_PACKET_LOSS = 10;
export const ICMP_DEFAULT_MAX_PACKET_LOSS = 20;
