/**
 * Stored results had three indexes led by their check: (account_id, check_id, seq),
 * (account_id, check_id, result_type, seq) and, for the check's cascade, (check_id). A result of each
 * of thousands of checks lands on a different page of every one of them, so each stored result
 * dirtied three such pages, written again at the next commit. One index (check_id, seq) serves the
 * reads (a check's results newest first, of any type or filtered on the row: ATTEMPT results are
 * the few retried failures) and the check's cascade. (account_id, created_at) keeps the account's
 * cascade a range lookup, and a new result lands at the end of its account's range. Not
 * (account_id) alone: with the rowid (seq) implied after it, SQLite's planner took it for a
 * check's results, reading every result of the account (test/service/run-queue-plans.test.ts).
 */
import type { Migration, MigrationDb } from './index.ts';

export const migration029: Migration = {
  version: 29,
  name: 'results-indexes',
  async up(db: MigrationDb) {
    await db.ddl('CREATE INDEX results_by_check_seq ON results (check_id, seq)');
    await db.ddl('CREATE INDEX results_by_account ON results (account_id, created_at)');
    await db.ddl('DROP INDEX results_check');
    await db.ddl('DROP INDEX results_check_type');
    await db.ddl('DROP INDEX results_by_check');
  },
};
