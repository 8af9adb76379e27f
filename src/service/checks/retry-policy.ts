/**
 * Retry strategies (the reference's RetryStrategy / ChecksV1RetryStrategy), as pure functions: which
 * strategy applies to a check, whether a failed attempt is retried, and when. The dispatcher's
 * RetryCoordinator (../dispatch/retries.ts) carries the decisions out; docs/api.md "Retries" states
 * the rules for users.
 */
import type { RunResult } from '../../shared/protocol.ts';

export const RETRY_STRATEGY_TYPES = ['FIXED', 'LINEAR', 'EXPONENTIAL', 'SINGLE_RETRY'] as const;
export type RetryStrategyType = (typeof RETRY_STRATEGY_TYPES)[number];
export const RETRY_ONLY_ON = ['NETWORK_ERROR'] as const;

export interface RetryStrategy {
  type: RetryStrategyType;
  baseBackoffSeconds?: number;
  maxRetries?: number;
  maxDurationSeconds?: number;
  sameRegion?: boolean;
  onlyOn?: Array<(typeof RETRY_ONLY_ON)[number]>;
}

/** A strategy with every optional field decided. */
export type ResolvedRetryStrategy = Required<RetryStrategy>;

/**
 * Defaults where the reference leaves a field out: baseBackoffSeconds 60 and sameRegion true are the
 * reference's; maxRetries 2 and maxDurationSeconds 600 are the vendor CLI's defaults (the API schema
 * has no default for them). SINGLE_RETRY always makes exactly one retry and has no duration bound.
 */
export const RETRY_DEFAULTS = {
  baseBackoffSeconds: 60,
  maxRetries: 2,
  maxDurationSeconds: 600,
  sameRegion: true,
} as const;

export function resolveStrategy(strategy: RetryStrategy): ResolvedRetryStrategy {
  return {
    type: strategy.type,
    baseBackoffSeconds: strategy.baseBackoffSeconds ?? RETRY_DEFAULTS.baseBackoffSeconds,
    maxRetries: strategy.type === 'SINGLE_RETRY' ? 1 : (strategy.maxRetries ?? RETRY_DEFAULTS.maxRetries),
    maxDurationSeconds: strategy.maxDurationSeconds ?? RETRY_DEFAULTS.maxDurationSeconds,
    sameRegion: strategy.sameRegion ?? RETRY_DEFAULTS.sameRegion,
    onlyOn: strategy.onlyOn ?? [],
  };
}

/**
 * What the deprecated `doubleCheck: true` means when no retryStrategy is given: the reference
 * describes it as "retry failed check runs" (once, from another location, right away), so it maps to
 * one immediate retry at another of the check's private locations.
 */
export const DOUBLE_CHECK_STRATEGY: RetryStrategy = Object.freeze({
  type: 'SINGLE_RETRY',
  baseBackoffSeconds: 0,
  maxRetries: 1,
  maxDurationSeconds: 600,
  sameRegion: false,
  onlyOn: [],
}) as RetryStrategy;

function isStrategy(value: unknown): value is RetryStrategy {
  return typeof value === 'object' && value !== null && RETRY_STRATEGY_TYPES.includes((value as RetryStrategy).type);
}

/**
 * The strategy that applies to a check: the group's, unless the group says FALLBACK (or the check is
 * in no group), then the check's own `retryStrategy`. null means failed runs are not retried. A
 * check's own `doubleCheck` is stored but not mapped: the reference defaults it to true, and mapping
 * it would retry every check that did not ask for retries.
 */
export function effectiveRetryStrategy(
  checkBody: Record<string, unknown>,
  groupBody: Record<string, unknown> | undefined,
): ResolvedRetryStrategy | null {
  if (groupBody && groupBody.retryStrategy !== 'FALLBACK') {
    return isStrategy(groupBody.retryStrategy) ? resolveStrategy(groupBody.retryStrategy) : null;
  }
  return isStrategy(checkBody.retryStrategy) ? resolveStrategy(checkBody.retryStrategy) : null;
}

/** Seconds to wait before retry number `retry` (1 for the first retry): 5s → 5,5,5 / 5,10,15 / 5,25,125. */
export function backoffSeconds(
  strategy: Pick<ResolvedRetryStrategy, 'type' | 'baseBackoffSeconds'>,
  retry: number,
): number {
  const base = strategy.baseBackoffSeconds;
  switch (strategy.type) {
    case 'FIXED':
    case 'SINGLE_RETRY':
      return base;
    case 'LINEAR':
      return base * retry;
    case 'EXPONENTIAL':
      return base ** retry;
  }
}

/** Where TCP, DNS, ICMP and SSL runs keep their result (each with a `requestError`). */
const PROTOCOL_RESULTS = ['tcpCheckResult', 'dnsCheckResult', 'icmpCheckResult', 'sslCheckResult'] as const;

/**
 * A failure counts as a network error when no response was received: for API checks
 * `apiCheckResult.requestError` is set and there is no response (refused, reset, DNS, TLS, timeout);
 * TCP, DNS and ICMP runs say so with the `requestError` of their result in details (a DNS answer
 * always comes with a response, so an error return code is not one); other types with a string
 * `details.requestError`. Failed assertions never count.
 */
export function isNetworkError(result: Pick<RunResult, 'apiCheckResult' | 'details'>): boolean {
  const api = result.apiCheckResult;
  if (api) return typeof api.requestError === 'string' && api.requestError !== '' && api.response === null;
  const details = result.details;
  const own = PROTOCOL_RESULTS.map((key) => details?.[key]).find((r) => r);
  const requestError = own ? own.requestError : details?.requestError;
  return typeof requestError === 'string' && requestError !== '';
}

export interface RetryContext {
  /** The attempt that just failed: 1 for the scheduled run, 2 for the first retry, ... */
  attempt: number;
  /** When the first attempt of the chain was due (ms). maxDurationSeconds counts from here. */
  chainStartedAtMs: number;
  nowMs: number;
  networkError: boolean;
}

/**
 * Whether the failed attempt is retried and when. maxRetries bounds the number of retries; the next
 * retry must also be due within maxDurationSeconds of the first attempt (SINGLE_RETRY has no such
 * bound). onlyOn NETWORK_ERROR retries only failures without a response.
 */
export function planRetry(strategy: ResolvedRetryStrategy | null, ctx: RetryContext): { dueAtMs: number } | null {
  if (!strategy) return null;
  if (strategy.onlyOn.includes('NETWORK_ERROR') && !ctx.networkError) return null;
  const retry = ctx.attempt;
  if (retry > strategy.maxRetries) return null;
  const dueAtMs = ctx.nowMs + backoffSeconds(strategy, retry) * 1000;
  if (strategy.type !== 'SINGLE_RETRY' && dueAtMs - ctx.chainStartedAtMs > strategy.maxDurationSeconds * 1000)
    return null;
  return { dueAtMs };
}

/**
 * Where a retry runs. sameRegion: where the failed attempt ran. Otherwise the next of the check's
 * private locations after that one (in the check's order, wrapping around); with a single location
 * that is the same one, the only place the check can run.
 */
export function retryLocation(
  sameRegion: boolean,
  failedAt: string,
  locationIds: readonly string[],
): string | undefined {
  if (locationIds.length === 0) return undefined;
  const index = locationIds.indexOf(failedAt);
  if (sameRegion) return index >= 0 ? failedAt : locationIds[0];
  return locationIds[(index + 1) % locationIds.length];
}
