/**
 * Deletes what is past retention (./config.ts): results older than RESULT_RETENTION_DAYS, then hourly
 * rollups older than ROLLUP_RETENTION_MONTHS. Leader work (../leader-work.ts), so replicas do not
 * all delete. Each statement deletes a small batch in its own short transaction, and the sweep yields
 * to the event loop between batches, so the API and the result path never wait long behind it: a
 * large backlog (the first sweep after an upgrade, a lowered setting) is worked off batch by batch.
 */
import { setImmediate as nextTurn } from 'node:timers/promises';
import type { RetentionRepo } from '../store/analytics-types.ts';
import { RepeatingTask } from '../repeating-task.ts';
import type { RetentionConfig } from './config.ts';
import type { Log } from '../../shared/log.ts';

export const SWEEP_EVERY_MS = 10 * 60_000;
/** Results deleted per statement: a few milliseconds of the writer at a time. */
export const RESULT_BATCH = 500;
/** Checks whose old rollups one statement deletes (the rows of an hour or so each, on a regular sweep). */
export const CHECK_BATCH = 50;
const HOUR_MS = 3_600_000;

export interface SweepCounts {
  results: number;
  rollups: number;
}

/** The cut-off instants of a sweep at `nowMs`: rollups by calendar months back (UTC). */
export function cutoffs(config: RetentionConfig, nowMs: number): { resultsBefore: string; rollupHourBefore: number } {
  const now = new Date(nowMs);
  const rollupsFrom = Date.UTC(
    now.getUTCFullYear(),
    now.getUTCMonth() - config.rollupMonths,
    now.getUTCDate(),
    now.getUTCHours(),
  );
  return {
    resultsBefore: new Date(nowMs - config.resultDays * 24 * HOUR_MS).toISOString(),
    rollupHourBefore: Math.floor(rollupsFrom / HOUR_MS),
  };
}

export class RetentionSweeper extends RepeatingTask {
  readonly #repo: RetentionRepo;
  readonly #config: RetentionConfig;
  readonly #log: Pick<Log, 'info' | 'error'>;
  #running: Promise<SweepCounts> | undefined;
  #stopped = false;

  constructor(opts: { repo: RetentionRepo; config: RetentionConfig; log: Pick<Log, 'info' | 'error'> }) {
    super(SWEEP_EVERY_MS);
    this.#repo = opts.repo;
    this.#config = opts.config;
    this.#log = opts.log;
  }

  override start(): void {
    this.#stopped = false;
    super.start();
  }

  /** Stops the timer; a sweep under way ends after its current batch. */
  override async stop(): Promise<void> {
    this.#stopped = true;
    super.stop();
    await this.#running;
  }

  protected tick(): Promise<SweepCounts> {
    return this.sweep();
  }

  /** One sweep at `nowMs` (tests pass the time); overlapping calls share the sweep under way. */
  sweep(nowMs: number = Date.now()): Promise<SweepCounts> {
    this.#running ??= this.#sweep(nowMs).finally(() => {
      this.#running = undefined;
    });
    return this.#running;
  }

  async #sweep(nowMs: number): Promise<SweepCounts> {
    const { resultsBefore, rollupHourBefore } = cutoffs(this.#config, nowMs);
    const counts: SweepCounts = { results: 0, rollups: 0 };
    try {
      counts.results = await this.#deleteResults(resultsBefore);
      counts.rollups = await this.#deleteRollups(rollupHourBefore);
      if (counts.results + counts.rollups > 0)
        this.#log.info({ ...counts }, 'retention: deleted old results and rollups');
    } catch (err) {
      // The next sweep starts over; nothing is half-deleted beyond a committed batch.
      this.#log.error({ err }, 'retention sweep failed');
    }
    return counts;
  }

  async #deleteResults(before: string): Promise<number> {
    let total = 0;
    for (;;) {
      const n = await this.#repo.deleteResultsBefore(before, RESULT_BATCH);
      total += n;
      if (n === 0 || this.#stopped) return total;
      await nextTurn();
    }
  }

  async #deleteRollups(beforeHour: number): Promise<number> {
    let total = 0;
    let after = '';
    for (;;) {
      const ids = await this.#repo.checkIdsAfter(after, CHECK_BATCH);
      if (ids.length === 0) return total;
      total += await this.#repo.deleteRollupsBefore(ids, beforeHour);
      after = ids.at(-1) ?? after;
      if (this.#stopped) return total;
      await nextTurn();
    }
  }
}
