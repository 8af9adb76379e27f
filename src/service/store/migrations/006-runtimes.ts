/**
 * The runtime a run needs (src/shared/runtimes.ts): set for runs with user code (setup or teardown
 * scripts, browser, multistep and Playwright checks), NULL for the rest. Claiming hands a run with a
 * runtime only to an agent that registered that runtime, so an agent is never leased a job it cannot
 * start. Runs queued before this migration have NULL and stay claimable by any agent, as before.
 */
import type { Migration, MigrationDb } from './index.ts';

export const migration006: Migration = {
  version: 6,
  name: 'runtimes',
  async up(db: MigrationDb) {
    await db.ddl(`ALTER TABLE runs ADD COLUMN runtime_id TEXT`);
  },
};
