/**
 * Repositories of check groups, their trigger tokens and the retry bookkeeping of runs.
 * Groups have numeric ids, as in the reference (CheckGroup.id is a number); everything else follows
 * the Store conventions (store.ts): ISO times, account-scoped reads.
 */
import type { KeyValue } from '../../shared/checks/types.ts';
import type { RetryStrategy } from '../checks/retry-policy.ts';

export interface GroupAssertion {
  source: string;
  comparison: string;
  property: string;
  target: string;
  regex: string | null;
}

export interface ApiCheckDefaults {
  url: string | null;
  headers: KeyValue[];
  queryParameters: KeyValue[];
  assertions: GroupAssertion[];
  basicAuth: { username: string; password: string } | null;
}

export interface GroupVariable {
  key: string;
  value: string;
  locked: boolean;
  secret: boolean;
}

/**
 * The accepted V2 body, defaults filled; what GET returns apart from id, timestamps and the
 * alertChannelSubscriptions, which live in alert_channel_subscriptions.
 */
export interface CheckGroupBody {
  name: string;
  activated: boolean;
  muted: boolean;
  tags: string[];
  locations: string[];
  concurrency: number;
  apiCheckDefaults: ApiCheckDefaults;
  browserCheckDefaults?: unknown;
  runtimeId: string | null;
  environmentVariables: GroupVariable[];
  setupSnippetId: number | null;
  tearDownSnippetId: number | null;
  localSetupScript: string | null;
  localTearDownScript: string | null;
  /** Slugs, as given; the repo keeps the resolved ids in locationIds. */
  privateLocations: string[];
  runParallel: boolean | null;
  alertSettings: Record<string, unknown> | null;
  /** After the doubleCheck mapping (see checks/retry-policy.ts); null means no retries. */
  retryStrategy: RetryStrategy | 'FALLBACK' | null;
  useGlobalAlertSettings: boolean | null;
  doubleCheck: boolean;
}

export interface StoredCheckGroup {
  id: number;
  accountId: string;
  name: string;
  activated: boolean;
  muted: boolean;
  concurrency: number;
  /** Ids of the private locations named in body.privateLocations, in that order. */
  locationIds: string[];
  body: CheckGroupBody;
  createdAt: string;
  updatedAt: string | null;
}

export type CheckGroupInput = Pick<
  StoredCheckGroup,
  'name' | 'activated' | 'muted' | 'concurrency' | 'locationIds' | 'body'
>;

export interface GroupTrigger {
  id: number;
  groupId: number;
  token: string;
  createdAt: string;
  calledAt: string | null;
  updatedAt: string | null;
}

export interface CheckGroupRepo {
  create(accountId: string, input: CheckGroupInput): Promise<StoredCheckGroup>;
  update(accountId: string, id: number, input: CheckGroupInput): Promise<StoredCheckGroup | undefined>;
  get(accountId: string, id: number): Promise<StoredCheckGroup | undefined>;
  /** Oldest first. `tags`: at least one of them; `names`: exact match of any. */
  list(
    accountId: string,
    opts: { limit: number; page: number; tags?: string[]; names?: string[] },
  ): Promise<StoredCheckGroup[]>;
  /** Refuses (`has_checks`) while a check still names the group, in the same transaction as the delete. */
  delete(accountId: string, id: number): Promise<'deleted' | 'not_found' | 'has_checks'>;
  /** Ids of the account's checks whose groupId is this group: by groupOrder (unset last), then creation. */
  memberIds(accountId: string, groupId: number): Promise<string[]>;
  getTrigger(accountId: string, groupId: number): Promise<GroupTrigger | undefined>;
  /** Returns the group's trigger, creating it when there is none (`created` says which). */
  ensureTrigger(accountId: string, groupId: number): Promise<{ trigger: GroupTrigger; created: boolean }>;
  deleteTrigger(accountId: string, groupId: number): Promise<boolean>;
  /** Resolves a trigger URL: the group's account when `token` is its trigger token. Records called_at. */
  callTrigger(groupId: number, token: string, now: string): Promise<{ accountId: string } | undefined>;
}

/** How a run sits in a retry chain. A scheduled or triggered run is attempt 1 of its own chain. */
export interface RunRetryLink {
  retryOf: string | null;
  attempt: number;
  /** When the chain's first attempt was due; null for a run that is not part of a chain. */
  chainStartedAt: string | null;
}

export interface PendingRetry {
  /** The failed run; one retry per run, so a result uploaded twice plans one retry. */
  retryOf: string;
  accountId: string;
  checkId: string;
  locationId: string;
  /** The attempt number the retry run will carry (2 for the first retry). */
  attempt: number;
  chainStartedAt: string;
  dueAt: string;
}

export interface RunRetryRepo {
  /** The retry link of a run (attempt 1, no chain when the run has none). */
  linkOf(runId: string): Promise<RunRetryLink>;
  setLink(runId: string, link: RunRetryLink): Promise<void>;
  /** Records a planned retry; false when one was already planned for that run. */
  plan(retry: PendingRetry): Promise<boolean>;
  /** Removes and returns the planned retries due at or before `now`, oldest first. */
  takeDue(now: string, limit: number): Promise<PendingRetry[]>;
  /** Planned retries not yet due (tests and diagnostics). */
  pending(accountId: string, checkId: string): Promise<PendingRetry[]>;
}
