/**
 * How long a save of the scheduler's cursors holds the service's event loop, on SQLite: `pairs`
 * (check, location) cursors saved as the scheduler saves them (SAVE_CHUNK_PAIRS per transaction, a
 * turn of the event loop between) and in one transaction, as it did before, `rounds` times each,
 * taking turns going first, after a first save (not counted) that inserts the rows. The hold is the
 * longest gap between turns of the loop while a save runs: a lease or result upload that arrives then
 * waits that long.
 *
 *   npm run bench -- cursor-save [--pairs 16000] [--rounds 5]
 */
import { performance } from 'node:perf_hooks';
import { setImmediate as nextTurn } from 'node:timers/promises';
import { SAVE_CHUNK_PAIRS, ScheduleCursorSaver } from '../../src/service/dispatch/schedule-cursors.ts';
import type { DueRun } from '../../src/service/dispatch/dispatcher.ts';
import type { StoredCheck } from '../../src/service/store/store.ts';
import { silentLog, startHarness } from '../../test/helpers/dispatch-harness.ts';
import { median, numberFlags, roundTo } from './_stats.ts';

interface Save {
  totalMs: number;
  longestHoldMs: number;
}

/** Runs `save` while counting the longest gap between turns of the event loop. */
async function timeHold(save: () => Promise<void>): Promise<Save> {
  let longest = 0;
  let last = performance.now();
  let saving = true;
  const watch = (async () => {
    while (saving) {
      await nextTurn();
      const now = performance.now();
      longest = Math.max(longest, now - last);
      last = now;
    }
  })();
  const started = performance.now();
  await save();
  const totalMs = performance.now() - started;
  saving = false;
  await watch;
  longest = Math.max(longest, performance.now() - last);
  return { totalMs: roundTo(totalMs, 1), longestHoldMs: roundTo(longest, 1) };
}

export async function run(args: string[]): Promise<Record<string, unknown>> {
  const { pairs, rounds } = numberFlags(args, { pairs: 16000, rounds: 5 });
  const h = await startHarness();
  try {
    const tenant = await h.tenant();
    const checks: StoredCheck[] = [];
    for (let i = 0; i < pairs; i++) checks.push(await h.check(tenant, { name: `check ${i}` }));
    const saver = new ScheduleCursorSaver({ repo: h.store.scheduleCursors, log: silentLog, runs: () => true });
    const due = (round: number): DueRun[] =>
      checks.map((check) => ({ check, locationId: tenant.location.id, dueAtMs: Date.now() + round * 10_000 }));
    const cursorsDue = (round: number) =>
      due(round).map((d) => ({
        checkId: d.check.id,
        locationId: d.locationId,
        dueAt: new Date(d.dueAtMs).toISOString(),
      }));
    // Not counted: the first save inserts every row, later ones update them, as in service.
    await h.store.scheduleCursors.save(cursorsDue(0));
    const chunked: Save[] = [];
    const oneTransaction: Save[] = [];
    const saveChunked = async (round: number) => {
      saver.record(due(round));
      chunked.push(await timeHold(() => saver.save()));
    };
    const saveInOne = async (round: number) => {
      const cursors = cursorsDue(round);
      oneTransaction.push(await timeHold(() => h.store.scheduleCursors.save(cursors)));
    };
    // Taking turns going first.
    for (let r = 0; r < rounds; r++) {
      const [first, second] = r % 2 === 0 ? [saveChunked, saveInOne] : [saveInOne, saveChunked];
      await first(2 * r + 1);
      await second(2 * r + 2);
    }
    const summary = (saves: Save[]) => ({
      longestHoldMs: median(saves.map((s) => s.longestHoldMs)),
      totalMs: median(saves.map((s) => s.totalMs)),
      rounds: saves,
    });
    return {
      workload: `${pairs} cursors saved on SQLite, ${SAVE_CHUNK_PAIRS} per transaction against one transaction; medians of ${rounds} rounds`,
      pairs,
      chunkPairs: SAVE_CHUNK_PAIRS,
      chunked: summary(chunked),
      oneTransaction: summary(oneTransaction),
    };
  } finally {
    await h.close();
  }
}
