/**
 * The hourly statistics rows a stored result adds to (store/repos/check-stats.ts addToRollup), on both
 * store backends. Old rows are left to the retention job (test/service/retention.test.ts).
 */
import { describe, expect, it } from 'vitest';
import { freshDatabaseEachTest } from '../support/fresh-account.ts';
import { accountWithCheck, storeRunResult } from '../support/results-in-store.ts';
import { storeBackends } from '../support/store-backends.ts';

const HOUR = 3_600_000;

describe.each(storeBackends())('hourly check statistics ($name)', (backend) => {
  const fresh = freshDatabaseEachTest(backend);

  const hoursOf = async (checkId: string) =>
    (await fresh.query('SELECT hour, runs FROM check_stats_hourly WHERE check_id = ? ORDER BY hour', [checkId])).map(
      (r) => [Number(r.hour), Number(r.runs)],
    );

  it('adds each sample to its hour, and keeps older hours for the retention job', async () => {
    const store = await fresh.open();
    const { accountId, checkId } = await accountWithCheck(store, 'Acme', 'Homepage');
    const now = Math.floor(Date.now() / HOUR) * HOUR + 1000;
    // A stored FINAL result is what adds a sample.
    const sample = (atMs: number) =>
      storeRunResult(store, { accountId, checkId, checkName: 'Homepage', atMs, outcome: { responseTime: 10 } });
    await sample(now - 50 * HOUR);
    await sample(now - 49 * HOUR);
    await sample(now - 49 * HOUR + 5);
    const hour = Math.floor(now / HOUR);
    expect(await hoursOf(checkId)).toEqual([
      [hour - 50, 1],
      [hour - 49, 2],
    ]);
    await sample(now);
    await sample(now + 5);
    expect(await hoursOf(checkId)).toEqual([
      [hour - 50, 1],
      [hour - 49, 2],
      [hour, 2],
    ]);
  });
});
