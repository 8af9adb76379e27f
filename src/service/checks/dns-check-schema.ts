/**
 * The body of a DNS check (the reference's ChecksV1DnsMonitorCreate / ChecksV1DnsMonitorUpdate).
 */
export const DNS_DEFAULT_DEGRADED_RESPONSE_TIME_MS = 500;
export const DNS_DEFAULT_MAX_RESPONSE_TIME_MS = 1000;
export const DNS_DEFAULT_PORT = 53;
