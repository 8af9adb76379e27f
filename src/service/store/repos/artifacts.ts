import type { ArtifactKind } from '../../../shared/artifacts.ts';
import type { ArtifactRecord, ArtifactRepo, ResultRunRef, RunOwner } from '../artifact-types.ts';
import { nowIso, type SqlDatabase } from '../sql/database.ts';

interface ArtifactRow {
  account_id: string;
  run_id: string;
  name: string;
  location_id: string;
  check_id: string;
  kind: string;
  content_type: string;
  size: number;
  sha256: string;
  complete: number;
  created_at: string;
  completed_at: string | null;
}

const toRecord = (row: ArtifactRow): ArtifactRecord => ({
  accountId: row.account_id,
  runId: row.run_id,
  name: row.name,
  locationId: row.location_id,
  checkId: row.check_id,
  kind: row.kind as ArtifactKind,
  contentType: row.content_type,
  size: row.size,
  sha256: row.sha256,
  complete: row.complete === 1,
  createdAt: row.created_at,
  completedAt: row.completed_at,
});

export class SqlArtifactRepo implements ArtifactRepo {
  readonly #db: SqlDatabase;
  constructor(db: SqlDatabase) {
    this.#db = db;
  }

  async runOwner(runId: string): Promise<RunOwner | undefined> {
    type OwnerRow = { account_id: string; location_id: string; check_id: string };
    // The run row first; once runs are pruned (24 h) the stored result still says whose it was.
    const row =
      (await this.#db.get<OwnerRow>('SELECT account_id, location_id, check_id FROM runs WHERE run_id = ?', [runId])) ??
      (await this.#db.get<OwnerRow>('SELECT account_id, location_id, check_id FROM results WHERE run_id = ?', [runId]));
    return row ? { accountId: row.account_id, locationId: row.location_id, checkId: row.check_id } : undefined;
  }

  async resultRun(accountId: string, checkId: string, resultId: string): Promise<ResultRunRef | undefined> {
    const row = await this.#db.get<{
      run_id: string;
      check_id: string;
      check_name: string;
      id: string;
      check_type: string;
    }>(
      `SELECT r.run_id, r.check_id, r.check_name, r.id, c.check_type
         FROM results r JOIN checks c ON c.id = r.check_id
        WHERE r.id = ? AND r.check_id = ? AND r.account_id = ?`,
      [resultId, checkId, accountId],
    );
    return row
      ? {
          runId: row.run_id,
          checkId: row.check_id,
          checkName: row.check_name,
          checkType: row.check_type,
          resultId: row.id,
        }
      : undefined;
  }

  async begin(record: Omit<ArtifactRecord, 'complete' | 'createdAt' | 'completedAt'>): Promise<ArtifactRecord> {
    const createdAt = nowIso();
    await this.#db.run(
      `INSERT INTO artifacts (account_id, run_id, name, location_id, check_id, kind, content_type, size, sha256, complete, created_at, completed_at)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, 0, ?, NULL)
       ON CONFLICT (run_id, name) DO UPDATE SET
         kind = excluded.kind, content_type = excluded.content_type, size = excluded.size,
         sha256 = excluded.sha256, complete = 0, created_at = excluded.created_at, completed_at = NULL`,
      [
        record.accountId,
        record.runId,
        record.name,
        record.locationId,
        record.checkId,
        record.kind,
        record.contentType,
        record.size,
        record.sha256,
        createdAt,
      ],
    );
    return { ...record, complete: false, createdAt, completedAt: null };
  }

  async get(accountId: string, runId: string, name: string): Promise<ArtifactRecord | undefined> {
    const row = await this.#db.get<ArtifactRow>(
      'SELECT * FROM artifacts WHERE account_id = ? AND run_id = ? AND name = ?',
      [accountId, runId, name],
    );
    return row ? toRecord(row) : undefined;
  }

  async markComplete(accountId: string, runId: string, name: string): Promise<void> {
    await this.#db.run(
      'UPDATE artifacts SET complete = 1, completed_at = ? WHERE account_id = ? AND run_id = ? AND name = ?',
      [nowIso(), accountId, runId, name],
    );
  }

  async remove(accountId: string, runId: string, name: string): Promise<void> {
    await this.#db.run('DELETE FROM artifacts WHERE account_id = ? AND run_id = ? AND name = ?', [
      accountId,
      runId,
      name,
    ]);
  }

  async listComplete(accountId: string, runId: string): Promise<ArtifactRecord[]> {
    const rows = await this.#db.all<ArtifactRow>(
      'SELECT * FROM artifacts WHERE account_id = ? AND run_id = ? AND complete = 1 ORDER BY completed_at, name',
      [accountId, runId],
    );
    return rows.map(toRecord);
  }

  async listExpired(
    incompleteBefore: string,
    limit: number,
  ): Promise<Array<{ accountId: string; runId: string; name: string }>> {
    const rows = await this.#db.all<{ account_id: string; run_id: string; name: string }>(
      `SELECT a.account_id, a.run_id, a.name FROM artifacts a
        WHERE NOT EXISTS (SELECT 1 FROM checks c WHERE c.id = a.check_id)
           OR (a.complete = 0 AND a.created_at < ?)
           OR (NOT EXISTS (SELECT 1 FROM results r WHERE r.run_id = a.run_id)
               AND NOT EXISTS (SELECT 1 FROM runs u WHERE u.run_id = a.run_id))
        LIMIT ?`,
      [incompleteBefore, limit],
    );
    return rows.map((r) => ({ accountId: r.account_id, runId: r.run_id, name: r.name }));
  }
}
