/**
 * Check sessions and the runs they remember (migration 031). A run's verdict is not copied here: it
 * is read from the result stored for the run (results.run_id is unique) and, while there is none,
 * from the run's state (queued, leased, or ended without a result).
 */
import type { RunResult } from '../../../shared/protocol.ts';
import type {
  CheckSessionRecord,
  CheckSessionRepo,
  CheckSessionRun,
  CheckSessionRunSource,
  NewCheckSession,
} from '../check-session-types.ts';
import type { SqlDatabase } from '../sql/database.ts';
import type { RunState } from '../store.ts';

interface SessionRow {
  id: string;
  account_id: string;
  check_id: string;
  check_name: string;
  check_type: string;
  run_source: string;
  started_at: string;
  cancelled_at: string | null;
}

interface SessionRunRow {
  run_id: string;
  location_id: string;
  run_location: string;
  state: string | null;
  finished_at: string | null;
  end_reason: string | null;
  result_id: string | null;
  result_created_at: string | null;
  result_type: string | null;
  payload: string | null;
}

const toSession = (row: SessionRow): CheckSessionRecord => ({
  id: row.id,
  accountId: row.account_id,
  checkId: row.check_id,
  checkName: row.check_name,
  checkType: row.check_type,
  runSource: row.run_source as CheckSessionRunSource,
  startedAt: row.started_at,
  cancelledAt: row.cancelled_at,
});

const toSessionRun = (row: SessionRunRow): CheckSessionRun => ({
  runId: row.run_id,
  locationId: row.location_id,
  runLocation: row.run_location,
  state: row.state as RunState | null,
  finishedAt: row.finished_at,
  endReason: row.end_reason,
  result:
    row.result_id === null || row.payload === null
      ? null
      : {
          id: row.result_id,
          createdAt: row.result_created_at ?? '',
          resultType: row.result_type === 'ATTEMPT' ? 'ATTEMPT' : 'FINAL',
          payload: JSON.parse(row.payload) as RunResult,
        },
});

const INSERT_SESSION = `
  INSERT INTO check_sessions (id, account_id, check_id, check_name, check_type, run_source, started_at)
  VALUES ($id, $accountId, $checkId, $checkName, $checkType, $runSource, $startedAt)`;
const INSERT_RUN = `
  INSERT INTO check_session_runs (run_id, session_id, location_id, run_location, position)
  VALUES ($runId, $sessionId, $locationId, $runLocation, $position)`;
// Each join is a primary-key or unique-index lookup per run (runs.run_id, results.run_id).
const RUNS_OF = `
  SELECT s.run_id, s.location_id, s.run_location, r.state, r.finished_at, r.end_reason,
         x.id AS result_id, x.created_at AS result_created_at, x.result_type, x.payload
  FROM check_session_runs s
  LEFT JOIN runs r ON r.run_id = s.run_id
  LEFT JOIN results x ON x.run_id = s.run_id
  WHERE s.session_id = $sessionId
  ORDER BY s.position`;

export class SqlCheckSessionRepo implements CheckSessionRepo {
  readonly #db: SqlDatabase;

  constructor(db: SqlDatabase) {
    this.#db = db;
  }

  async create(session: NewCheckSession): Promise<void> {
    const { runs, id, accountId, checkId, checkName, checkType, runSource, startedAt } = session;
    const s = { id, accountId, checkId, checkName, checkType, runSource, startedAt };
    await this.#db.transaction(async () => {
      await this.#db.run(INSERT_SESSION, s);
      for (const [position, run] of runs.entries())
        await this.#db.run(INSERT_RUN, { ...run, sessionId: s.id, position });
    });
  }

  async get(accountId: string, id: string): Promise<CheckSessionRecord | undefined> {
    const row = await this.#db.get<SessionRow>('SELECT * FROM check_sessions WHERE id = ? AND account_id = ?', [
      id,
      accountId,
    ]);
    return row && toSession(row);
  }

  async runsOf(sessionId: string): Promise<CheckSessionRun[]> {
    return (await this.#db.all<SessionRunRow>(RUNS_OF, { sessionId })).map(toSessionRun);
  }

  async markCancelled(accountId: string, id: string, at: string): Promise<boolean> {
    const done = await this.#db.run(
      'UPDATE check_sessions SET cancelled_at = COALESCE(cancelled_at, $at) WHERE id = $id AND account_id = $accountId',
      {
        at,
        id,
        accountId,
      },
    );
    return done.changes > 0;
  }
}
