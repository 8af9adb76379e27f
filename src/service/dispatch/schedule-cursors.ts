/**
 * The scheduler's cursors: the due time of the newest slot enqueued for each (check, location) pair,
 * so that a scheduler that starts (a restart, or a new leader) goes on from the slot after it.
 *
 * They are saved in bulk, every SAVE_EVERY_MS, not with each run: an index over the runs that answered
 * the same question cost a random page write per enqueued run (BENCHMARKS.md "Schedule cursors"),
 * where a bulk save writes each pair's row once per save. What the last save did not cover is in the
 * run queue itself: a run enqueued since then is still queued or leased, or finished since. So a
 * start reads the cursors together with the open runs and the runs finished in the last TAIL_MS,
 * several saves long; a save that fails keeps its cursors for the next one.
 */
import type { ScheduleCursor, ScheduleCursorRepo } from '../store/dispatch-types.ts';
import { RepeatingTask } from '../repeating-task.ts';
import type { DispatchLog, DueRun } from './dispatcher.ts';

export const SAVE_EVERY_MS = 30_000;
export const TAIL_MS = 5 * SAVE_EVERY_MS;

const pairKey = (checkId: string, locationId: string) => `${checkId}/${locationId}`;

/** Each pair's newest due time (ms) at a start, keyed by pairKey. */
export async function loadNewestDueTimes(repo: ScheduleCursorRepo, nowMs: number): Promise<Map<string, number>> {
  const newest = new Map<string, number>();
  for (const c of await repo.newestDueTimes(new Date(nowMs - TAIL_MS).toISOString()))
    newest.set(pairKey(c.checkId, c.locationId), Date.parse(c.dueAt));
  return newest;
}

export function newestDueOf(newest: ReadonlyMap<string, number>, checkId: string, locationId: string) {
  return newest.get(pairKey(checkId, locationId));
}

export class ScheduleCursorSaver extends RepeatingTask {
  readonly #repo: ScheduleCursorRepo;
  readonly #log: DispatchLog;
  /** Whether the scheduler still runs the pair: a deleted check's cursor is not saved. */
  readonly #runs: (checkId: string, locationId: string) => boolean;
  #unsaved = new Map<string, { checkId: string; locationId: string; dueAtMs: number }>();

  constructor(opts: {
    repo: ScheduleCursorRepo;
    log: DispatchLog;
    runs: (checkId: string, locationId: string) => boolean;
  }) {
    super(SAVE_EVERY_MS);
    this.#repo = opts.repo;
    this.#log = opts.log;
    this.#runs = opts.runs;
  }

  /** Notes the runs just enqueued; the next save writes them. */
  record(due: readonly DueRun[]): void {
    for (const { check, locationId, dueAtMs } of due) this.#keepNewest(check.id, locationId, dueAtMs);
  }

  async save(): Promise<void> {
    const batch = [...this.#unsaved.values()].filter((c) => this.#runs(c.checkId, c.locationId));
    this.#unsaved = new Map();
    if (batch.length === 0) return;
    const cursors: ScheduleCursor[] = batch.map(({ checkId, locationId, dueAtMs }) => ({
      checkId,
      locationId,
      dueAt: new Date(dueAtMs).toISOString(),
    }));
    try {
      await this.#repo.save(cursors);
    } catch (err) {
      this.#log.warn({ err, cursors: batch.length }, 'saving schedule cursors failed; the next save retries');
      for (const c of batch) this.#keepNewest(c.checkId, c.locationId, c.dueAtMs);
    }
  }

  protected tick(): Promise<void> {
    return this.save();
  }

  #keepNewest(checkId: string, locationId: string, dueAtMs: number): void {
    const key = pairKey(checkId, locationId);
    const held = this.#unsaved.get(key);
    if (held && held.dueAtMs >= dueAtMs) return;
    this.#unsaved.set(key, { checkId, locationId, dueAtMs });
  }
}
