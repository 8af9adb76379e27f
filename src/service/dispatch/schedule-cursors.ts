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
import { setImmediate as nextTurn } from 'node:timers/promises';
import type { ScheduleCursor, ScheduleCursorRepo } from '../store/dispatch-types.ts';
import { pairKey } from '../store/repos/runs.ts';
import { RepeatingTask } from '../repeating-task.ts';
import type { DispatchLog, DueRun } from './dispatcher.ts';

export const SAVE_EVERY_MS = 30_000;
export const TAIL_MS = 5 * SAVE_EVERY_MS;
/**
 * Pairs per transaction of a save. On SQLite a transaction holds the service's one connection and
 * its thread, so a save of every pair in one held up each lease and result upload that came meanwhile
 * (BENCHMARKS.md "Schedule cursors saved in chunks").
 */
export const SAVE_CHUNK_PAIRS = 500;

/** A pair's newest enqueued slot as the saver holds it until a save writes it. */
type UnsavedCursor = Omit<ScheduleCursor, 'dueAt'> & { dueAtMs: number };

/** The order of schedule_cursors' primary key (check_id, location_id), as SQLite compares text. */
function byKey(a: UnsavedCursor, b: UnsavedCursor): number {
  if (a.checkId !== b.checkId) return a.checkId < b.checkId ? -1 : 1;
  return a.locationId < b.locationId ? -1 : a.locationId > b.locationId ? 1 : 0;
}

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
  #unsaved = new Map<string, UnsavedCursor>();

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

  /** Saves what was recorded since the last save, a chunk per transaction with a turn of the event loop between. */
  async save(): Promise<void> {
    // In key order, so each chunk writes one stretch of the table's pages: chunks of pairs in no
    // order each rewrote most of its pages, and took as long in all as one transaction.
    const batch = [...this.#unsaved.values()].filter((c) => this.#runs(c.checkId, c.locationId)).sort(byKey);
    this.#unsaved = new Map();
    for (let at = 0; at < batch.length; at += SAVE_CHUNK_PAIRS) {
      if (at > 0) await nextTurn();
      await this.#saveChunk(batch.slice(at, at + SAVE_CHUNK_PAIRS));
    }
  }

  async #saveChunk(chunk: readonly UnsavedCursor[]): Promise<void> {
    const cursors: ScheduleCursor[] = chunk.map(({ checkId, locationId, dueAtMs }) => ({
      checkId,
      locationId,
      dueAt: new Date(dueAtMs).toISOString(),
    }));
    try {
      await this.#repo.save(cursors);
    } catch (err) {
      this.#log.warn({ err, cursors: chunk.length }, 'saving schedule cursors failed; the next save retries');
      for (const c of chunk) this.#keepNewest(c.checkId, c.locationId, c.dueAtMs);
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
