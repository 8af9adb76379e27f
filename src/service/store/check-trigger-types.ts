/**
 * The repository of check trigger tokens (the reference's CheckTrigger): one per check, whose URL
 * runs the check now without an API key. Store conventions (store.ts): ISO times, account-scoped reads.
 */

export interface CheckTrigger {
  id: number;
  checkId: string;
  token: string;
  createdAt: string;
  calledAt: string | null;
  updatedAt: string | null;
}

export interface CheckTriggerRepo {
  get(accountId: string, checkId: string): Promise<CheckTrigger | undefined>;
  /** Returns the check's trigger, creating it when there is none (`created` says which). */
  ensure(accountId: string, checkId: string): Promise<{ trigger: CheckTrigger; created: boolean }>;
  delete(accountId: string, checkId: string): Promise<boolean>;
  /** Resolves a trigger URL: the check's account when `token` is its trigger token. Records called_at. */
  call(checkId: string, token: string, now: string): Promise<{ accountId: string } | undefined>;
}
