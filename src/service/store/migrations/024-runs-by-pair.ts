/**
 * The newest run of each (check, location) pair, for a scheduler that starts (a restart, or a new
 * leader after the old one died) and must know whether the pair's last slot was enqueued.
 */
import type { Migration, MigrationDb } from './index.ts';

export const migration024: Migration = {
  version: 24,
  name: 'runs-by-pair',
  async up(db: MigrationDb) {
    await db.ddl('CREATE INDEX runs_by_pair ON runs (check_id, location_id, due_at)');
  },
};
