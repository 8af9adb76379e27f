/**
 * Runs one check now, when its trigger URL is called: a run at each of its effective locations (its
 * group's, when the group has some), all enqueued at once. The runs are watched like a group
 * trigger's (group-trigger.ts): they are never retried (retries.ts asks `isTriggered`), and each is
 * forgotten when it ends (its FINAL result arrives, or it expires or is cancelled without one).
 *
 * The watched runs live in memory: after a service restart, or when the result reaches another
 * replica, a failed triggered run is retried as a scheduled one would be.
 */
import { placementOf } from '../checks/group-of.ts';
import { triggeredLocations } from './trigger-locations.ts';
import { TriggerRunner } from './trigger-runner.ts';

export interface TriggeredCheckRuns {
  checkId: string;
  /** One run per effective location, in the check's (or its group's) location order. */
  runs: Array<{ runId: string; locationId: string }>;
}

/** Each open run it started is kept as `true`: a check trigger has nothing more to do when one ends. */
export class CheckTriggerRunner extends TriggerRunner<true> {
  /**
   * Starts a run of the check at each of its effective locations; undefined when the account has no
   * such check. A deactivated check (or one in a deactivated group) and a heartbeat run nothing.
   */
  async trigger(accountId: string, checkId: string): Promise<TriggeredCheckRuns | undefined> {
    const check = await this.store.checks.get(accountId, checkId);
    if (!check) return undefined;
    const locationIds = triggeredLocations(check, await placementOf(this.store, check));
    const runs: TriggeredCheckRuns['runs'] = [];
    for (const locationId of this.open.stopped ? [] : locationIds) {
      const run = await this.enqueue(check, locationId, Date.now());
      this.open.add(run.runId, true);
      runs.push({ runId: run.runId, locationId });
    }
    this.log.info({ checkId, runs: runs.length }, 'check triggered');
    return { checkId, runs };
  }

  runFinished(runId: string): void {
    this.open.take(runId);
  }
}
