/**
 * Each run's start deadline (`start_by`): the latest time an agent may still start it. Under overload
 * a first attempt whose deadline passed is shed at claim time instead of run late, and claims take
 * the earliest deadline first, so the claim index is keyed by it (docs/protocol.md "Overload").
 *
 * Runs queued when this migration runs had no deadline but the queue TTL: they get that one, counted
 * from their due time with the default TTL, so none is shed by a rule that did not exist when it was
 * enqueued. Finished and leased runs need none (a run handed back gets one when it is queued again).
 */
import type { Migration, MigrationDb } from './index.ts';

/** JOB_QUEUE_TTL_SECONDS's default: the only deadline the runs queued before this migration had. */
const DEFAULT_QUEUE_TTL_MS = 360_000;

export const migration026: Migration = {
  version: 26,
  name: 'run-start-deadline',
  async up(db: MigrationDb) {
    await db.ddl('ALTER TABLE runs ADD COLUMN start_by TEXT');
    const queued = await db.all<{ run_id: string; due_at: string }>(
      "SELECT run_id, due_at FROM runs WHERE state = 'queued'",
    );
    for (const run of queued) {
      const startBy = new Date(Date.parse(run.due_at) + DEFAULT_QUEUE_TTL_MS).toISOString();
      await db.run('UPDATE runs SET start_by = $startBy WHERE run_id = $runId', { startBy, runId: run.run_id });
    }
    await db.ddl(`
      DROP INDEX runs_claim;
      -- Claiming and shedding: queued runs of one location and class, earliest start deadline first.
      CREATE INDEX runs_claim ON runs (location_id, check_class, start_by) WHERE state = 'queued';
    `);
  },
};
