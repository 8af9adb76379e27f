/**
 * Runs every check of a group now, when its trigger URL is called, with at most `concurrency` runs
 * of the trigger open at once: the first `concurrency` runs are enqueued at once and each further
 * one when an open run ends (its result arrives, or it expires or is cancelled without one).
 *
 * The batches live in memory: a service restart forgets the runs not yet enqueued (the open ones
 * still run). Runs of a trigger are not retried (see retries.ts), so a slot is never held by a chain.
 */
import { effectivePlacement } from '../checks/group-merge.ts';
import type { StoredCheck } from '../store/store.ts';
import { triggeredLocations } from './trigger-locations.ts';
import { TriggerRunner } from './trigger-runner.ts';

interface Item {
  check: StoredCheck;
  locationId: string;
}

interface Batch {
  groupId: number;
  waiting: Item[];
  open: number;
  concurrency: number;
}

export interface TriggeredRuns {
  groupId: number;
  concurrency: number;
  /** Every (check, location) run the trigger makes, in order (groupOrder, then creation). */
  runs: Array<{ checkId: string; locationId: string }>;
}

/** Each open run it started is kept with its batch, which enqueues its next run when one ends. */
export class GroupTriggerRunner extends TriggerRunner<Batch> {
  /** Starts a run of every activated check of the group. A deactivated group runs nothing. */
  async trigger(accountId: string, groupId: number): Promise<TriggeredRuns | undefined> {
    const group = await this.store.checkGroups.get(accountId, groupId);
    if (!group) return undefined;
    const items: Item[] = [];
    for (const checkId of await this.store.checkGroups.memberIds(accountId, groupId)) {
      const check = await this.store.checks.get(accountId, checkId);
      if (!check) continue;
      for (const locationId of triggeredLocations(check, effectivePlacement(check, group)))
        items.push({ check, locationId });
    }
    const batch: Batch = { groupId, waiting: [...items], open: 0, concurrency: Math.max(1, group.concurrency) };
    this.log.info({ groupId, runs: items.length, concurrency: batch.concurrency }, 'check group triggered');
    await this.#fill(batch);
    return {
      groupId,
      concurrency: batch.concurrency,
      runs: items.map((i) => ({ checkId: i.check.id, locationId: i.locationId })),
    };
  }

  runFinished(runId: string): void {
    const batch = this.open.take(runId);
    if (!batch) return;
    batch.open--;
    void this.#fill(batch).catch((err: unknown) =>
      this.log.error({ err, groupId: batch.groupId }, 'group trigger could not enqueue'),
    );
  }

  async #fill(batch: Batch): Promise<void> {
    while (!this.open.stopped && batch.open < batch.concurrency) {
      const item = batch.waiting.shift();
      if (!item) break;
      batch.open++;
      try {
        const run = await this.enqueue(item.check, item.locationId, Date.now());
        this.open.add(run.runId, batch);
      } catch (err) {
        batch.open--;
        this.log.error(
          { err, checkId: item.check.id, groupId: batch.groupId },
          'group trigger could not enqueue a run',
        );
      }
    }
  }
}
