/**
 * Counts, per account, the writes of this process that change what a dashboard shows (a counted
 * result, a check's status). A rendered dashboard is cached under its account's count, so a result
 * stored here shows at the next refresh; one stored by another replica shows when the cache's short
 * lifetime ends (web/dashboards/serve.ts).
 */
import type { AccountChangeCount } from '../check-stats-types.ts';

export class AccountChanges implements AccountChangeCount {
  readonly #counts = new Map<string, number>();

  bump(accountId: string): void {
    this.#counts.set(accountId, (this.#counts.get(accountId) ?? 0) + 1);
  }

  of(accountId: string): number {
    return this.#counts.get(accountId) ?? 0;
  }
}
