/**
 * Migration 032 on both backends: the hourly rollups of 018 (one row per check and hour) are kept
 * under the new key (location '', failed when every run failed, status 0), so a dashboard's last
 * day and the analytics of those hours read the same figures after the upgrade.
 */
import { describe, expect, it } from 'vitest';
import { MIGRATIONS, runMigrations } from '../../src/service/store/migrations/index.ts';
import { freshDatabaseEachTest } from '../support/fresh-account.ts';
import { storeBackends } from '../support/store-backends.ts';

const HOUR = 3_600_000;

describe.each(storeBackends())('migration 032 (analytics rollups) on $name', (backend) => {
  const fresh = freshDatabaseEachTest(backend);

  it('keeps the rows of 018 and their figures', async () => {
    const hour = Math.floor(Date.now() / HOUR) - 1;
    const db = fresh.connect();
    try {
      await runMigrations(
        db,
        MIGRATIONS.filter((m) => m.version < 32),
      );
      await db.run("INSERT INTO accounts (id, name, created_at) VALUES ('acc-1', 'Acme', '2026-01-01T00:00:00.000Z')");
      await db.run(
        `INSERT INTO checks (id, account_id, check_type, name, activated, muted, frequency, body, created_at)
         VALUES ('chk-1', 'acc-1', 'API', 'Home', 1, 0, 1, '{}', '2026-01-01T00:00:00.000Z')`,
      );
      await db.run(
        `INSERT INTO check_stats_hourly (check_id, hour, account_id, runs, failures, total_ms, min_ms, max_ms, histogram)
         VALUES ('chk-1', $hour, 'acc-1', 4, 1, 400, 50, 200, '{"50":4}')`,
        { hour },
      );
    } finally {
      await db.close();
    }
    const store = await fresh.open();
    const [row] = await store.analytics.rollupsOfCheck('acc-1', 'chk-1', hour, hour + 1);
    expect(row).toMatchObject({
      hour,
      location: '',
      failed: false,
      statusCode: 0,
      runs: 4,
      failures: 1,
      totalMs: 400,
      minMs: 50,
      maxMs: 200,
      sqMs: 40_000,
      retries: 0,
    });
    expect((await store.checkStats.forChecks('acc-1', ['chk-1'], Date.now())).get('chk-1')).toMatchObject({
      runs: 4,
      failures: 1,
      availability: 75,
      avgMs: 100,
    });
  });
});
