/**
 * What a badge says: a check's status from its check status, a group's as the worst of its checks',
 * and the response time shown with `responseTime=true`. Pure, so every rule is tested without HTTP.
 */
import type { BadgeCheckState } from '../store/account-settings-types.ts';

/** Worst first: a group shows the first of these any of its running checks has. */
export const BADGE_STATUSES = ['failing', 'degraded', 'passing', 'no data', 'deactivated'] as const;
export type BadgeStatus = (typeof BADGE_STATUSES)[number];

/** One check's status. Errors count as failing, as in the check status (hasFailures || hasErrors). */
export function checkBadgeStatus(check: BadgeCheckState): BadgeStatus {
  if (!check.activated) return 'deactivated';
  if (!check.hasResult) return 'no data';
  if (check.hasFailures || check.hasErrors) return 'failing';
  return check.isDegraded ? 'degraded' : 'passing';
}

/**
 * The status a badge shows for these checks: the worst among those that run. Deactivated checks do
 * not count unless nothing runs; an empty group has no data.
 */
export function badgeStatus(checks: readonly BadgeCheckState[]): BadgeStatus {
  if (checks.length === 0) return 'no data';
  const statuses = new Set(checks.map(checkBadgeStatus));
  return BADGE_STATUSES.find((s) => statuses.has(s)) ?? 'no data';
}

/**
 * Milliseconds to show: the latest counted result's response time, averaged over the running checks
 * that have one (a group); null when none has.
 */
export function badgeResponseTime(checks: readonly BadgeCheckState[]): number | null {
  const times = checks.filter((c) => c.activated && c.responseTime !== null).map((c) => c.responseTime as number);
  if (times.length === 0) return null;
  return Math.round(times.reduce((sum, t) => sum + t, 0) / times.length);
}
