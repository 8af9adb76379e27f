/**
 * The hourly rollups (018) become the store of the analytics API (repos/check-stats.ts): the key gains
 * the run location, whether the run failed and its HTTP status code, so grouping by location or
 * status code and filtering by status read rollups instead of results; a row also sums the squares of
 * the response times (standard deviation), the retries, and per measured metric (timing phases, ICMP
 * latency and loss, browser error counts) its count, sum, squares, bounds and histogram, as JSON.
 * Still one row written per stored result: a check that passes from one location has one row an hour.
 *
 * Rows are no longer pruned on the write path: retention (../../retention/) deletes them after
 * ROLLUP_RETENTION_DAYS. The (account_id, hour) index serves GET /v1/reporting, which reads every
 * check of an account over a window. The rows of 018 (at most two days) are kept under location ''.
 */
import type { Migration, MigrationDb } from './index.ts';

export const migration032: Migration = {
  version: 32,
  name: 'analytics-rollups',
  async up(db: MigrationDb) {
    // Built beside the old table and renamed after: PostgreSQL keeps a renamed table's constraint
    // names, so creating the new one under the old name first would clash on check_stats_hourly_pkey.
    await db.ddl(`
      CREATE TABLE check_stats_hourly_032 (
        check_id    TEXT NOT NULL REFERENCES checks(id) ON DELETE CASCADE,
        hour        INTEGER NOT NULL,
        location    TEXT NOT NULL,
        failed      INTEGER NOT NULL,
        status_code INTEGER NOT NULL,
        account_id  TEXT NOT NULL,
        runs        INTEGER NOT NULL,
        failures    INTEGER NOT NULL,
        total_ms    REAL NOT NULL,
        min_ms      REAL NOT NULL,
        max_ms      REAL NOT NULL,
        sq_ms       REAL NOT NULL,
        retries     INTEGER NOT NULL,
        histogram   TEXT NOT NULL,
        metrics     TEXT NOT NULL,
        PRIMARY KEY (check_id, hour, location, failed, status_code)
      ) WITHOUT ROWID;
    `);
    // sq_ms of old rows is unknown: runs × mean², i.e. a standard deviation of 0 for those hours.
    await db.run(`
      INSERT INTO check_stats_hourly_032 (check_id, hour, location, failed, status_code, account_id, runs, failures, total_ms, min_ms, max_ms, sq_ms, retries, histogram, metrics)
      SELECT check_id, hour, '', CASE WHEN failures = runs THEN 1 ELSE 0 END, 0, account_id, runs, failures, total_ms, min_ms, max_ms,
             CASE WHEN runs > 0 THEN total_ms * total_ms / runs ELSE 0 END, 0, histogram, '{}'
      FROM check_stats_hourly`);
    await db.ddl('DROP TABLE check_stats_hourly');
    await db.ddl('ALTER TABLE check_stats_hourly_032 RENAME TO check_stats_hourly');
    await db.ddl('CREATE INDEX check_stats_hourly_account ON check_stats_hourly (account_id, hour)');
  },
};
