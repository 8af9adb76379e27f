/**
 * The hourly statistics rows a stored result adds to (store/repos/check-stats.ts addToRollup), on both
 * store backends. Since migration 032 old rows are left to the retention job (test/service/retention.test.ts).
 */
import { afterEach, describe, expect, it } from 'vitest';
import { createAccount } from '../../src/service/accounts.ts';
import type { Store } from '../../src/service/store/store.ts';
import type { RunResult } from '../../src/shared/protocol.ts';
import { type FreshStore, storeBackends } from '../support/store-backends.ts';

const HOUR = 3_600_000;

describe.each(storeBackends())('hourly check statistics ($name)', (backend) => {
  let fresh: FreshStore;
  afterEach(async () => fresh?.dispose());

  async function checkOf(store: Store): Promise<{ accountId: string; checkId: string }> {
    const { accountId } = await createAccount(store, 'Acme');
    const settings = {
      activated: true,
      muted: false,
      frequency: 1,
      frequencyOffset: null,
      locationIds: [],
      body: { tags: [] },
    };
    const check = await store.checks.create({ accountId, checkType: 'API', name: 'Homepage', ...settings });
    return { accountId, checkId: check.id };
  }

  const hoursOf = async (checkId: string) =>
    (await fresh.query('SELECT hour, runs FROM check_stats_hourly WHERE check_id = ? ORDER BY hour', [checkId])).map(
      (r) => [Number(r.hour), Number(r.runs)],
    );

  it('adds each sample to its hour, and keeps older hours for the retention job', async () => {
    fresh = await backend.fresh();
    const store = await fresh.open();
    const { accountId, checkId } = await checkOf(store);
    const now = Math.floor(Date.now() / HOUR) * HOUR + 1000;
    // A stored FINAL result is what adds a sample.
    const sample = (atMs: number) =>
      store.results.insertOnce({
        accountId,
        checkId,
        runId: crypto.randomUUID(),
        checkName: 'Homepage',
        locationId: 'loc',
        runLocation: 'office',
        attempts: 1,
        resultType: 'FINAL',
        createdAt: new Date(atMs).toISOString(),
        payload: { responseTime: 10, hasFailures: false, hasErrors: false, isCancelled: false } as RunResult,
      });
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
