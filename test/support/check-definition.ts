/**
 * The part every test builder of an uptime check definition (API, TCP, ICMP, URL, SSL) shares: who
 * the check is, not inverted (shouldFail false), no runtime, and its response-time thresholds.
 */
import type { CheckType } from '../../src/shared/checks/types.ts';

/** The check's id, its account's id and its name. */
export interface CheckIdentity {
  id: string;
  accountId: string;
  name: string;
}

/** `degradedMs` and `maxMs`: degraded above the first, failed above the second. */
export function uptimeCheckBase<K extends CheckType>(
  checkType: K,
  identity: CheckIdentity,
  degradedMs: number,
  maxMs: number,
) {
  return {
    ...identity,
    checkType,
    shouldFail: false,
    runtimeId: null,
    degradedResponseTime: degradedMs,
    maxResponseTime: maxMs,
  };
}
