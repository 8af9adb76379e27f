/**
 * Where each (check, location) pair's schedule stands (migration 034): saved in bulk by the scheduler,
 * read once when a scheduler starts (src/service/dispatch/schedule-cursors.ts).
 */
import type { ScheduleCursor, ScheduleCursorRepo } from '../dispatch-types.ts';
import { READ_COMMITTED, type SqlDatabase } from '../sql/database.ts';
import { dialectSql } from '../sql/dialect-sql.ts';

/**
 * Forward only: a leader that lost its lead may still save an older cursor. The pair's check and
 * location must still exist (a cursor of a deleted one would break its foreign key and the whole save).
 */
const saveStatement = (greatest: (a: string, b: string) => string) => `
  INSERT INTO schedule_cursors (check_id, location_id, last_due_at)
  SELECT $checkId, $locationId, $dueAt
  WHERE EXISTS (SELECT 1 FROM checks WHERE id = $checkId)
    AND EXISTS (SELECT 1 FROM private_locations WHERE id = $locationId)
  ON CONFLICT (check_id, location_id)
  DO UPDATE SET last_due_at = ${greatest('schedule_cursors.last_due_at', 'excluded.last_due_at')}`;

/**
 * The saved cursors and the runs a save may not have covered yet, each half through its own index:
 * the open runs through the queue's partial indexes, the finished ones through runs_finished.
 */
const NEWEST = `
  SELECT check_id, location_id, MAX(due_at) AS due_at FROM (
    SELECT check_id, location_id, last_due_at AS due_at FROM schedule_cursors
    UNION ALL SELECT check_id, location_id, due_at FROM runs WHERE state = 'queued'
    UNION ALL SELECT check_id, location_id, due_at FROM runs WHERE state = 'leased'
    UNION ALL SELECT check_id, location_id, due_at FROM runs WHERE finished_at >= $finishedSince
  ) newest
  GROUP BY check_id, location_id`;

export class SqlScheduleCursorRepo implements ScheduleCursorRepo {
  readonly #db: SqlDatabase;
  readonly #save: string;

  constructor(db: SqlDatabase) {
    this.#db = db;
    this.#save = saveStatement(dialectSql(db.dialect).greatest);
  }

  /**
   * One transaction, so thousands of rows are one commit. READ COMMITTED on PostgreSQL: each upsert
   * is right on its own (forward only), and a SERIALIZABLE transaction that long would read enough
   * checks rows to fail concurrent requests' transactions with serialization errors.
   */
  async save(cursors: readonly ScheduleCursor[]): Promise<void> {
    if (cursors.length === 0) return;
    await this.#db.transaction(async () => {
      for (const { checkId, locationId, dueAt } of cursors)
        await this.#db.run(this.#save, { checkId, locationId, dueAt });
    }, READ_COMMITTED);
  }

  async newestDueTimes(finishedSince: string): Promise<ScheduleCursor[]> {
    const rows = await this.#db.all<{ check_id: string; location_id: string; due_at: string }>(NEWEST, {
      finishedSince,
    });
    return rows.map((r) => ({ checkId: r.check_id, locationId: r.location_id, dueAt: r.due_at }));
  }
}
