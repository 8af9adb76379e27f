/**
 * Hourly rollups of each check's results (repos/check-stats.ts): runs, failures, summed response
 * time and a response-time histogram (with the fastest and slowest run) per check per hour, so a dashboard reads 24 small rows per check
 * instead of every result of the day. Filled from the last day's stored results on the way in.
 */
import type { RunResult } from '../../../shared/protocol.ts';
import { addRollup } from '../repos/check-stats.ts';
import type { Migration, MigrationDb } from './index.ts';

const BACKFILL_MS = 25 * 3_600_000;

export const migration018: Migration = {
  version: 18,
  name: 'check-stats',
  async up(db: MigrationDb) {
    await db.ddl(`
      CREATE TABLE check_stats_hourly (
        check_id   TEXT NOT NULL REFERENCES checks(id) ON DELETE CASCADE,
        hour       INTEGER NOT NULL,
        account_id TEXT NOT NULL,
        runs       INTEGER NOT NULL,
        failures   INTEGER NOT NULL,
        total_ms   REAL NOT NULL,
        min_ms     REAL NOT NULL,
        max_ms     REAL NOT NULL,
        histogram  TEXT NOT NULL,
        PRIMARY KEY (check_id, hour)
      ) WITHOUT ROWID;
    `);
    const since = new Date(Date.now() - BACKFILL_MS).toISOString();
    const rows = await db.all<{ account_id: string; check_id: string; created_at: string; payload: string }>(
      "SELECT account_id, check_id, created_at, payload FROM results WHERE created_at >= ? AND result_type <> 'ATTEMPT'",
      [since],
    );
    for (const row of rows) {
      const payload = JSON.parse(row.payload) as RunResult;
      if (payload.isCancelled) continue;
      await addRollup(db, {
        accountId: row.account_id,
        checkId: row.check_id,
        atMs: Date.parse(row.created_at),
        failed: payload.hasFailures || payload.hasErrors,
        responseTimeMs: payload.responseTime,
      });
    }
  },
};
