/**
 * Applies the results a crash left stored but not applied to their check's status (see
 * ResultRepo.insertOnce's pendingStatus), in storage order. Each result is applied once whoever
 * replays it: CheckStatusRepo.applyResult clears its pending mark in the status update's transaction.
 */
import type { Store } from '../store/store.ts';
import type { CheckStatusService } from './status-service.ts';
import type { Log } from '../../shared/log.ts';

const BATCH = 200;

export interface ReplayOptions {
  store: Pick<Store, 'results' | 'checks'>;
  statuses: CheckStatusService;
  log: Pick<Log, 'error'>;
  /** Only results stored before this time (ISO): leaves those the live path is still applying alone. */
  storedBefore?: string;
}

/** Replays every pending result; returns how many were looked at. One that fails is logged and left for the next replay. */
export async function replayPendingResults({ store, statuses, log, storedBefore }: ReplayOptions): Promise<number> {
  let afterSequence = 0;
  let seen = 0;
  for (;;) {
    const batch = await store.results.listStatusPending({ limit: BATCH, afterSequence, storedBefore });
    for (const r of batch) {
      afterSequence = r.sequence;
      // The check was deleted: its results, and their pending marks, went with it.
      const check = await store.checks.get(r.accountId, r.checkId);
      if (!check) continue;
      const run = {
        accountId: r.accountId,
        checkId: r.checkId,
        dueAt: r.dueAt,
        locationId: r.locationId,
        checkType: r.payload.checkType,
      };
      const event = {
        run,
        check,
        resultId: r.id,
        resultType: r.resultType ?? 'FINAL',
        runLocation: r.runLocation,
        result: r.payload,
      };
      await statuses
        .resultStored({ ...event, atMs: Date.parse(r.createdAt) })
        .catch((err: unknown) =>
          log.error(
            { err, resultId: r.id, checkId: r.checkId },
            'stored result could not be applied to its check status',
          ),
        );
    }
    seen += batch.length;
    if (batch.length < BATCH) return seen;
  }
}
