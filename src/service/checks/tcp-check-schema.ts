/**
 * The body of a TCP check (the reference's ChecksV1TcpCheckCreate / ChecksV1TcpCheckUpdate).
 */
export const TCP_DEFAULT_DEGRADED_RESPONSE_TIME_MS = 3000;
export const TCP_DEFAULT_MAX_RESPONSE_TIME_MS = 5000;
