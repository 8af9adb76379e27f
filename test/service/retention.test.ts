/**
 * Retention (src/service/retention/): results older than RESULT_RETENTION_DAYS and hourly rollups
 * older than ROLLUP_RETENTION_MONTHS are deleted in small batches, on both store backends; analytics
 * of a window whose results are gone still answer from the rollups. And the settings' parsing.
 */
import { describe, expect, it } from 'vitest';
import { loadServiceConfig } from '../../src/service/config.ts';
import { leaderTasksOf, type LeaderWorkers } from '../../src/service/leader-work.ts';
import { DEFAULT_RETENTION, loadRetentionConfig } from '../../src/service/retention/config.ts';
import { cutoffs, RESULT_BATCH, RetentionSweeper } from '../../src/service/retention/sweeper.ts';
import type { RetentionRepo } from '../../src/service/store/analytics-types.ts';
import type { Store } from '../../src/service/store/store.ts';
import { ConfigError } from '../../src/shared/errors.ts';
import { freshDatabaseEachTest } from '../support/fresh-account.ts';
import { accountWithCheck, storeRunResult } from '../support/results-in-store.ts';
import { storeBackends } from '../support/store-backends.ts';

const HOUR = 3_600_000;
const DAY = 24 * HOUR;
const quietLog = { error: () => {}, info: () => {} };

/** A repository that records each batch the sweeper asks for, to show that it works in small steps. */
function counting(repo: RetentionRepo) {
  const batches: number[] = [];
  const wrapped: RetentionRepo = {
    deleteResultsBefore: async (before, limit) => {
      const n = await repo.deleteResultsBefore(before, limit);
      batches.push(n);
      return n;
    },
    checkIdsAfter: (after, limit) => repo.checkIdsAfter(after, limit),
    deleteRollupsBefore: (ids, hour) => repo.deleteRollupsBefore(ids, hour),
  };
  return { wrapped, batches };
}

describe.each(storeBackends())('retention ($name)', (backend) => {
  const fresh = freshDatabaseEachTest(backend);

  async function checkWithHistory(store: Store, nowMs: number, oldCount: number) {
    const { accountId, checkId } = await accountWithCheck(store, 'Acme', 'Homepage');
    const insert = (atMs: number, ms: number) =>
      storeRunResult(store, {
        accountId,
        checkId,
        checkName: 'Homepage',
        atMs,
        outcome: { responseTime: ms },
      });
    // Stored in time order, as the service stores them: 14 months old, 40 days old (many), then recent.
    await insert(nowMs - 430 * DAY, 7);
    for (let i = 0; i < oldCount; i++) await insert(nowMs - 40 * DAY + i * 1000, 20);
    for (let i = 0; i < 3; i++) await insert(nowMs - HOUR + i * 1000, 30);
    return { accountId, checkId };
  }

  it('deletes old results in batches and old rollups, keeping what analytics still needs', async () => {
    const store = await fresh.open();
    const now = Date.now();
    const oldCount = RESULT_BATCH + 20;
    const { accountId, checkId } = await checkWithHistory(store, now, oldCount);
    const { wrapped, batches } = counting(store.retention);
    const sweeper = new RetentionSweeper({ repo: wrapped, config: DEFAULT_RETENTION, log: quietLog });

    expect(await sweeper.sweep(now)).toEqual({ results: oldCount + 1, rollups: 1 });
    expect(batches.every((n) => n <= RESULT_BATCH)).toBe(true);
    expect(batches.filter((n) => n > 0).length).toBeGreaterThanOrEqual(2);
    const left = await fresh.query('SELECT created_at FROM results WHERE check_id = ?', [checkId]);
    expect(left).toHaveLength(3);

    // The 40-day-old hour is still in the rollups: its analytics outlive its results.
    const oldHour = Math.floor((now - 40 * DAY) / HOUR);
    const rows = await store.analytics.rollupsOfCheck(accountId, checkId, oldHour, oldHour + 1);
    expect(rows.reduce((n, r) => n + r.runs, 0)).toBeGreaterThan(0);
    const ancient = Math.floor((now - 430 * DAY) / HOUR);
    expect(await store.analytics.rollupsOfCheck(accountId, checkId, ancient, ancient + 1)).toEqual([]);

    // Nothing left to do: a second sweep deletes nothing.
    expect(await sweeper.sweep(now)).toEqual({ results: 0, rollups: 0 });
  });

  it('honours shorter settings', async () => {
    const store = await fresh.open();
    const now = Date.now();
    const { checkId } = await checkWithHistory(store, now, 2);
    const sweeper = new RetentionSweeper({
      repo: store.retention,
      config: { resultDays: 1, rollupMonths: 1 },
      log: quietLog,
    });
    expect(await sweeper.sweep(now)).toEqual({ results: 3, rollups: 2 });
    const hours = await fresh.query('SELECT hour FROM check_stats_hourly WHERE check_id = ?', [checkId]);
    expect(hours.map((r) => Number(r.hour))).toEqual([Math.floor((now - HOUR) / HOUR)]);
  });
});

describe('retention settings', () => {
  it('defaults to 30 days of results and 13 months of rollups', () => {
    expect(loadRetentionConfig({})).toEqual({ resultDays: 30, rollupMonths: 13 });
    expect(
      loadServiceConfig({ DATA_DIR: '/tmp/x', RESULT_RETENTION_DAYS: '7', ROLLUP_RETENTION_MONTHS: '24' }).retention,
    ).toEqual({ resultDays: 7, rollupMonths: 24 });
  });

  it.each([
    [{ RESULT_RETENTION_DAYS: 'a month' }, 'RESULT_RETENTION_DAYS'],
    [{ RESULT_RETENTION_DAYS: '0' }, 'RESULT_RETENTION_DAYS'],
    [{ ROLLUP_RETENTION_MONTHS: '0' }, 'ROLLUP_RETENTION_MONTHS'],
    [{ ROLLUP_RETENTION_MONTHS: '1.5' }, 'ROLLUP_RETENTION_MONTHS'],
    [{ RESULT_RETENTION_DAYS: '90', ROLLUP_RETENTION_MONTHS: '2' }, 'ROLLUP_RETENTION_MONTHS'],
  ])('%o is refused, naming %s', (env, name) => {
    let error: unknown;
    try {
      loadServiceConfig({ DATA_DIR: '/tmp/x', ...env });
    } catch (err) {
      error = err;
    }
    expect(error).toBeInstanceOf(ConfigError);
    expect((error as ConfigError).message).toContain(name);
  });

  it('cuts rollups off by calendar months and results by days', () => {
    const now = Date.parse('2026-11-28T18:30:00Z');
    const { resultsBefore, rollupHourBefore } = cutoffs({ resultDays: 30, rollupMonths: 13 }, now);
    expect(resultsBefore).toBe('2026-10-29T18:30:00.000Z');
    expect(new Date(rollupHourBefore * HOUR).toISOString()).toBe('2025-10-28T18:00:00.000Z');
  });

  it('runs as leader work', () => {
    const noop = { start: () => {}, stop: () => {} };
    const workers = new Proxy({}, { get: () => noop }) as unknown as LeaderWorkers;
    expect(leaderTasksOf(workers).map((t) => t.name)).toContain('retention');
  });
});

describe('the retention sweeper as leader work', () => {
  it('sweeps once at start, and stop waits for the batch under way and ends the sweep there', async () => {
    const firstBatch = Promise.withResolvers<void>();
    const batchHeld = Promise.withResolvers<void>();
    const calls: string[] = [];
    const repo: RetentionRepo = {
      deleteResultsBefore: async () => {
        calls.push('results');
        firstBatch.resolve();
        await batchHeld.promise;
        return RESULT_BATCH;
      },
      checkIdsAfter: async () => {
        calls.push('checks');
        return [];
      },
      deleteRollupsBefore: async () => 0,
    };
    const sweeper = new RetentionSweeper({ repo, config: DEFAULT_RETENTION, log: quietLog });
    sweeper.start();
    await firstBatch.promise;
    let stopped = false;
    const stopping = sweeper.stop().then(() => {
      stopped = true;
    });
    await new Promise((resolve) => setImmediate(resolve));
    expect(stopped).toBe(false);
    batchHeld.resolve();
    await stopping;
    // A full batch goes on to the next one; stopped, the sweep took no other batch of results.
    expect(calls).toEqual(['results', 'checks']);
  });
});
