/**
 * Account settings (one row per account, defaults when there is none) and what a status badge reads.
 * Badges are served without an API key, so their reads start from a check or group id alone and
 * answer only for accounts that turned badges on: an unknown id and a disabled account look alike.
 */

/** What an account has chosen; every field has its default for an account that never chose. */
export interface AccountSettings {
  /** Whether GET /v1/badges/... answers for this account's checks and groups (default false). */
  badgesEnabled: boolean;
}

export const DEFAULT_ACCOUNT_SETTINGS: AccountSettings = { badgesEnabled: false };

export interface AccountSettingsRepo {
  get(accountId: string): Promise<AccountSettings>;
  /** Stores the whole settings object (a PUT) and returns it. */
  put(accountId: string, settings: AccountSettings): Promise<AccountSettings>;
}

/** One check as a badge sees it: whether it runs, and its current status (check_statuses). */
export interface BadgeCheckState {
  /** False when the check or its group is deactivated. */
  activated: boolean;
  /** Whether a counted result exists yet (otherwise the flags below are false and responseTime null). */
  hasResult: boolean;
  hasFailures: boolean;
  hasErrors: boolean;
  isDegraded: boolean;
  /** Milliseconds of the latest counted result; null without one. */
  responseTime: number | null;
}

/** What one badge shows: a name and the checks it sums up (one for a check, the members for a group). */
export interface BadgeSubject {
  name: string;
  checks: BadgeCheckState[];
}

export interface BadgeRepo {
  /** The check's badge subject; undefined when it is unknown or its account has badges off. */
  check(checkId: string): Promise<BadgeSubject | undefined>;
  /** The group's badge subject with its member checks; undefined when unknown or badges are off. */
  group(groupId: number): Promise<BadgeSubject | undefined>;
}
