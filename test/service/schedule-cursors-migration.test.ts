/**
 * Migration 034 on both backends: each (check, location) pair's cursor starts at its newest run, which
 * is what the dropped runs_by_pair index answered, so a scheduler that starts after the upgrade goes
 * on from the same slot. Runs of a deleted check get no cursor (it would break the foreign key).
 */
import { describe, expect, it } from 'vitest';
import { MIGRATIONS, runMigrations } from '../../src/service/store/migrations/index.ts';
import { freshDatabaseEachTest } from '../support/fresh-account.ts';
import { storeBackends } from '../support/store-backends.ts';

const at = (second: number): string => new Date(Date.UTC(2026, 0, 1, 0, 0, second)).toISOString();

describe.each(storeBackends())('migration 034 (schedule cursors) on $name', (backend) => {
  const fresh = freshDatabaseEachTest(backend);

  it("starts each pair's cursor at its newest run and drops runs_by_pair", async () => {
    const db = fresh.connect();
    try {
      await runMigrations(
        db,
        MIGRATIONS.filter((m) => m.version < 34),
      );
      await db.run(`INSERT INTO accounts (id, name, created_at) VALUES ('acc-1', 'Acme', '${at(0)}')`);
      await db.run(
        `INSERT INTO private_locations (id, account_id, name, slug_name, icon, created_at)
         VALUES ('loc-1', 'acc-1', 'Office', 'office', 'location', '${at(0)}')`,
      );
      await db.run(
        `INSERT INTO checks (id, account_id, check_type, name, activated, muted, frequency, body, created_at)
         VALUES ('chk-1', 'acc-1', 'API', 'Home', 1, 0, 1, '{}', '${at(0)}')`,
      );
      // Two runs of chk-1, and one of a check that no longer exists.
      for (const [runId, checkId, due, state] of [
        ['run-1', 'chk-1', 10, 'completed'],
        ['run-2', 'chk-1', 70, 'expired'],
        ['run-3', 'chk-gone', 80, 'completed'],
      ] as const) {
        await db.run(
          `INSERT INTO runs (run_id, account_id, check_id, location_id, check_type, check_class, due_at, state, timeout_ms, created_at)
           VALUES ($runId, 'acc-1', $checkId, 'loc-1', 'API', 'uptime', $dueAt, $state, 30000, $dueAt)`,
          { runId, checkId, dueAt: at(due), state },
        );
      }
    } finally {
      await db.close();
    }
    const store = await fresh.open();
    expect(await store.scheduleCursors.newestDueTimes(at(1000))).toEqual([
      { checkId: 'chk-1', locationId: 'loc-1', dueAt: at(70) },
    ]);
    const indexes = await fresh.query(
      backend.name === 'sqlite'
        ? "SELECT name FROM sqlite_master WHERE type = 'index' AND name = 'runs_by_pair'"
        : "SELECT indexname AS name FROM pg_indexes WHERE indexname = 'runs_by_pair'",
    );
    expect(indexes).toEqual([]);
  });
});
