/**
 * The run queue, on SQLite or PostgreSQL. Every transition is one statement (or one transaction),
 * and every statement that moves a run out of a state names that state in its WHERE clause, so a
 * transition that lost a race changes nothing instead of overwriting the winner.
 *
 * On PostgreSQL several service replicas share the queue: a claim locks the rows it picks and skips
 * rows another replica's claim holds (FOR UPDATE SKIP LOCKED), so no run is handed out twice and no
 * claim waits for or fails on another. The transitions run at READ COMMITTED: each statement re-checks
 * its WHERE clause against the row as the other transaction left it.
 *
 * The SQL texts are fixed per dialect; both backends prepare each text once per connection, because
 * the dispatch path runs them tens of times a second.
 */
import type { CheckClass, CheckDefinition, CheckType, OtherCheckDefinition } from '../../../shared/checks/types.ts';
import type { LeaseRef } from '../../../shared/protocol.ts';
import { runtimeNeededBy } from '../../../shared/runtimes.ts';
import type {
  ClaimRequest,
  HeartbeatOutcome,
  LocationLoad,
  LocationQueueStats,
  LocationRunOutcome,
  NewRun,
  RunRepo,
  RunWithRetryLink,
} from '../dispatch-types.ts';
import type { Run, RunState } from '../store.ts';
import { READ_COMMITTED, type SqlDatabase } from '../sql/database.ts';
import { type DialectSql, dialectSql } from '../sql/dialect-sql.ts';
import { type RetryLinkColumns, retryLinkOf } from './run-retries.ts';

interface RunRow extends RetryLinkColumns {
  run_id: string;
  account_id: string;
  check_id: string;
  location_id: string;
  check_type: string;
  check_class: string;
  due_at: string;
  state: string;
  lease_id: string | null;
  agent_id: string | null;
  lease_expires_at: string | null;
  lease_attempt: number;
  cancel_requested: number;
  end_reason: string | null;
  timeout_ms: number;
  check_json: string | null;
  created_at: string;
  finished_at: string | null;
  session_id: string | null;
}

const toRun = (row: RunRow): Run =>
  withSnapshot(
    {
      runId: row.run_id,
      accountId: row.account_id,
      checkId: row.check_id,
      locationId: row.location_id,
      checkType: row.check_type as CheckType,
      checkClass: row.check_class as CheckClass,
      dueAt: row.due_at,
      state: row.state as RunState,
      leaseId: row.lease_id,
      agentId: row.agent_id,
      leaseExpiresAt: row.lease_expires_at,
      leaseAttempt: row.lease_attempt,
      cancelRequested: row.cancel_requested === 1,
      endReason: row.end_reason,
      timeoutMs: row.timeout_ms,
      createdAt: row.created_at,
      finishedAt: row.finished_at,
      sessionId: row.session_id,
    },
    row,
  );

/**
 * `run` with its definition snapshot parsed when first read: only a job handed to an agent reads
 * it, and the result path reads each run without it (a parse of the whole definition per result).
 */
function withSnapshot(run: Omit<Run, 'check'>, row: RunRow): Run {
  return Object.defineProperty(run, 'check', {
    enumerable: true,
    configurable: true,
    get(this: Run) {
      const check =
        row.check_json === null ? finishedPlaceholder(row) : (JSON.parse(row.check_json) as CheckDefinition);
      Object.defineProperty(this, 'check', { value: check, enumerable: true, writable: true, configurable: true });
      return check;
    },
  }) as Run;
}

/** The row INSERT writes for `run`, as a Run: reading it back only to parse what was just written cost a copy and a parse per run. */
const queuedRun = (run: NewRun, now: string): Run => ({
  runId: run.runId,
  accountId: run.accountId,
  checkId: run.checkId,
  locationId: run.locationId,
  checkType: run.checkType,
  checkClass: run.checkClass,
  dueAt: run.dueAt,
  state: 'queued',
  leaseId: null,
  agentId: null,
  leaseExpiresAt: null,
  leaseAttempt: 1,
  cancelRequested: false,
  endReason: null,
  timeoutMs: run.timeoutMs,
  check: run.check,
  createdAt: now,
  finishedAt: null,
  sessionId: run.sessionId ?? null,
});

/**
 * The definition snapshot is only needed until a run is handed out and finished, and it is most of
 * a row's size (a few hundred sub-minute checks make millions of runs a day), so every statement
 * that finishes a run drops it. A finished run reports this stand-in instead.
 */
function finishedPlaceholder(row: RunRow): CheckDefinition {
  return {
    id: row.check_id,
    accountId: row.account_id,
    name: '',
    checkType: row.check_type as OtherCheckDefinition['checkType'],
    shouldFail: false,
    runtimeId: null,
  };
}

const byDueAt = (a: Run, b: Run): number => (a.dueAt < b.dueAt ? -1 : a.dueAt > b.dueAt ? 1 : 0);

/**
 * How a lease ends without a result (expired, released, agent deregistered). A cancel-requested run
 * is not handed out again: its user asked for it to stop. Any other run goes back to the queue as
 * the next lease attempt; its lease_id is cleared so the old agent's heartbeats answer `lost`, while
 * agent_id keeps the last holder for diagnosis. Its start deadline becomes the moment it came back:
 * claims take it before the first attempts waiting, and only the queue TTL ends it (it is not shed).
 */
const HAND_BACK = `
  state = CASE WHEN cancel_requested = 1 THEN 'cancelled' ELSE 'queued' END,
  lease_attempt = CASE WHEN cancel_requested = 1 THEN lease_attempt ELSE lease_attempt + 1 END,
  end_reason = CASE WHEN cancel_requested = 1 THEN $cancelReason ELSE end_reason END,
  finished_at = CASE WHEN cancel_requested = 1 THEN $now ELSE NULL END,
  check_json = CASE WHEN cancel_requested = 1 THEN NULL ELSE check_json END,
  start_by = $now,
  lease_id = NULL,
  lease_expires_at = NULL`;

/**
 * Leases a run may lose to an expiry before it is given up. A run whose agent dies every time it
 * runs it (user code that crashes its agent) must not take down, one after another, every agent that
 * leases it: after this many it expires with the reason instead of being handed out again.
 */
export const MAX_EXPIRED_LEASES = 3;

/** HAND_BACK for a lease that expired: as above, but the last allowed attempt ends the run. */
const EXPIRE_LEASE = `
  state = CASE WHEN cancel_requested = 1 THEN 'cancelled' WHEN lease_attempt >= $maxAttempts THEN 'expired' ELSE 'queued' END,
  lease_attempt = CASE WHEN cancel_requested = 1 OR lease_attempt >= $maxAttempts THEN lease_attempt ELSE lease_attempt + 1 END,
  end_reason = CASE WHEN cancel_requested = 1 THEN $cancelReason WHEN lease_attempt >= $maxAttempts THEN $abandonReason ELSE end_reason END,
  finished_at = CASE WHEN cancel_requested = 1 OR lease_attempt >= $maxAttempts THEN $now ELSE NULL END,
  check_json = CASE WHEN cancel_requested = 1 OR lease_attempt >= $maxAttempts THEN NULL ELSE check_json END,
  start_by = $now,
  lease_id = NULL,
  lease_expires_at = NULL`;

/** Why a first attempt was shed at claim time (docs/protocol.md "Overload"). */
export const SHED_LATE_REASON =
  'shed: no agent of its location could start it within half its interval of its due time (the agents were at capacity)';

const CANCELLED_WHILE_RUNNING = 'cancelled; the agent stopped before confirming it';

/** The statements that differ by dialect (row locks, JSON lists, UUIDs, planner hints); the others are shared. */
export function dialectStatements(d: DialectSql) {
  // The queued runs of a location that one agent could run: its check types, the runtimes it carries.
  const runnable = `state = 'queued' AND location_id = $locationId
        AND check_type IN (${d.jsonArrayValues('$checkTypes')})
        AND (runtime_id IS NULL OR runtime_id IN (${d.jsonArrayValues('$runtimes')}))`;
  const pick = (checkClass: string, limit: string) => `
    SELECT run_id FROM (
      SELECT run_id FROM runs
      WHERE ${runnable} AND check_class = '${checkClass}' AND (lease_attempt > 1 OR session_id IS NOT NULL OR start_by > $now)
      ORDER BY start_by LIMIT ${limit} ${d.forUpdateSkipLocked}) AS ${checkClass}_runs`;
  // Overloaded: hand-backs and session runs first as always, then the latest deadlines. Once shedLate
  // has run, a queued run whose deadline passed is one of those, so each half is one range of the
  // claim index.
  const pickNewest = (checkClass: string, limit: string) => `
    SELECT run_id FROM (
      SELECT run_id, k, start_by FROM (
        SELECT run_id, 0 AS k, start_by FROM (
          SELECT run_id, start_by FROM runs
          WHERE ${runnable} AND check_class = '${checkClass}' AND (lease_attempt > 1 OR session_id IS NOT NULL) AND start_by <= $now
          ORDER BY start_by LIMIT ${limit} ${d.forUpdateSkipLocked}) AS ${checkClass}_back
        UNION ALL
        SELECT run_id, 1 AS k, start_by FROM (
          SELECT run_id, start_by FROM runs
          WHERE ${runnable} AND check_class = '${checkClass}' AND start_by > $now
          ORDER BY start_by DESC LIMIT ${limit} ${d.forUpdateSkipLocked}) AS ${checkClass}_fresh) AS ${checkClass}_both
      ORDER BY k, CASE WHEN k = 0 THEN start_by END, start_by DESC LIMIT ${limit}) AS ${checkClass}_runs`;
  const claim = (p: typeof pick) => `
      WITH picked AS MATERIALIZED (${p('uptime', '$uptime')} UNION ALL ${p('heavy', '$heavy')})
      UPDATE runs
      SET state = 'leased', lease_id = ${d.newUuid}, agent_id = $agentId, lease_expires_at = $leaseExpiresAt
      WHERE state = 'queued' AND run_id IN (SELECT run_id FROM picked)
      RETURNING *`;
  return {
    // One statement picks and leases: each class takes its runs with the earliest start deadline up
    // to the agent's free slots, restricted to the check types it has runners for and, for runs with
    // user code, to the runtimes it carries (runtime_id NULL: no user code). A first attempt past its
    // deadline is never picked (shedLate ends it); a run handed back after a lease is. The pick is
    // materialised so it runs once; `state = 'queued'` in the UPDATE makes pick-and-mark atomic even
    // against another connection. Lease ids are made in the UPDATE, one per row, so claiming stays
    // one statement. Under overload (ClaimRequest.order 'newest') the latest deadlines go first.
    claim: claim(pick),
    claimNewest: claim(pickNewest),
    // Both classes listed so the claim index (location, class, start_by) serves the range.
    shedLate: `
      UPDATE runs SET state = 'expired', end_reason = $endReason, finished_at = $now, check_json = NULL
      WHERE ${runnable} AND check_class IN ('uptime', 'heavy') AND lease_attempt = 1 AND session_id IS NULL AND start_by <= $now`,
    // lease_attempt = 1 while queued means "never leased": a run handed back after an agent died
    // keeps its place, because the reference re-runs such a check elsewhere. Read through the
    // queued runs' index (runs_queued_by_check), never one that holds the pair's every run of the
    // last day (thousands for a 10 s check), once per enqueue.
    supersede: `
      UPDATE runs SET state = 'expired', end_reason = 'superseded by a newer run', finished_at = $now, check_json = NULL
      WHERE check_id = $checkId AND location_id = $locationId AND state = 'queued'
        AND lease_attempt = 1 AND session_id IS NULL AND ${d.noIndex('due_at')} < $dueAt
      RETURNING run_id`,
    // supersede for a whole enqueue batch in one statement: $pairs is a JSON array of {c, l, d} (check,
    // location, due time), each pair at most once (enqueueMany).
    supersedeMany: `
      UPDATE runs SET state = 'expired', end_reason = 'superseded by a newer run', finished_at = $now, check_json = NULL
      WHERE run_id IN (
        SELECT r.run_id FROM ${d.jsonArrayTable('$pairs', 'p')}
        JOIN runs r ON r.check_id = ${d.jsonText('p.value', 'c')} AND r.location_id = ${d.jsonText('p.value', 'l')}
          AND r.state = 'queued'
        WHERE r.lease_attempt = 1 AND r.session_id IS NULL AND ${d.noIndex('r.due_at')} < ${d.jsonText('p.value', 'd')})
      RETURNING run_id, check_id, location_id`,
    // runIds is a JSON array: one statement for a batch of results, by the primary key.
    getMany: `SELECT * FROM runs WHERE run_id IN (${d.jsonArrayValues('$runIds')})`,
    // keep is a JSON array of location ids; '[]' cancels at every location.
    cancelCheckQueued: `
      UPDATE runs SET state = 'cancelled', end_reason = $endReason, finished_at = $now, check_json = NULL
      WHERE check_id = $checkId AND account_id = $accountId AND state = 'queued'
        AND location_id NOT IN (${d.jsonArrayValues('$keep')})`,
    cancelCheckLeased: `
      UPDATE runs SET cancel_requested = 1
      WHERE check_id = $checkId AND account_id = $accountId AND state = 'leased' AND cancel_requested = 0
        AND location_id NOT IN (${d.jsonArrayValues('$keep')})`,
  };
}

const INSERT = `
  INSERT INTO runs (run_id, account_id, check_id, location_id, check_type, check_class, due_at, start_by, state,
                    lease_attempt, cancel_requested, timeout_ms, check_json, created_at, runtime_id, session_id)
  VALUES ($runId, $accountId, $checkId, $locationId, $checkType, $checkClass, $dueAt, $startBy, 'queued',
          1, 0, $timeoutMs, $checkJson, $now, $runtimeId, $sessionId)`;
const GET = 'SELECT * FROM runs WHERE run_id = ?';
/** A run a newer one superseded (supersede; supersedeMany also names its pair). */
interface SupersededRow {
  run_id: string;
}

/** A check at one location (a pair), as a map key: a pair's runs supersede each other, and it has a schedule cursor. */
export const pairKey = (checkId: string, locationId: string) => `${checkId}/${locationId}`;
const GET_FOR_ACCOUNT = 'SELECT * FROM runs WHERE run_id = ? AND account_id = ?';
const EXTEND = `
  UPDATE runs SET lease_expires_at = $leaseExpiresAt
  WHERE run_id = $runId AND lease_id = $leaseId AND agent_id = $agentId AND state = 'leased' AND cancel_requested = 0
  RETURNING lease_expires_at`;
const LEASE_OF = `
  SELECT cancel_requested, lease_expires_at FROM runs
  WHERE run_id = $runId AND lease_id = $leaseId AND agent_id = $agentId AND state = 'leased'`;
const FINISH = `
  UPDATE runs
  SET state = CASE WHEN cancel_requested = 1 THEN 'cancelled' ELSE 'completed' END,
      end_reason = CASE WHEN cancel_requested = 1 THEN 'cancelled while running; the agent reported it' ELSE end_reason END,
      finished_at = $now, lease_expires_at = NULL, check_json = NULL
  WHERE run_id = $runId AND state IN ('queued', 'leased')`;
const RELEASE_ONE = `
  UPDATE runs SET ${HAND_BACK}
  WHERE run_id = $runId AND lease_id = $leaseId AND agent_id = $agentId AND state = 'leased'
  RETURNING *`;
const RELEASE_ALL = `
  UPDATE runs SET ${HAND_BACK}
  WHERE agent_id = $agentId AND state = 'leased'
  RETURNING *`;
const REQUEUE_EXPIRED = `
  UPDATE runs SET ${EXPIRE_LEASE}
  WHERE state = 'leased' AND lease_expires_at <= $now
  RETURNING *`;
const LIST_STALE = `SELECT * FROM runs WHERE state = 'queued' AND due_at <= $dueBefore ORDER BY due_at LIMIT $limit`;
const EXPIRE_QUEUED = `
  UPDATE runs SET state = 'expired', end_reason = $endReason, finished_at = $now, check_json = NULL
  WHERE run_id = $runId AND state = 'queued'`;
const CANCEL_QUEUED = `
  UPDATE runs SET state = 'cancelled', end_reason = $endReason, finished_at = $now, check_json = NULL
  WHERE run_id = $runId AND account_id = $accountId AND state = 'queued'`;
const REQUEST_CANCEL = `
  UPDATE runs SET cancel_requested = 1
  WHERE run_id = $runId AND account_id = $accountId AND state = 'leased'`;
const PRUNE = `
  DELETE FROM runs WHERE run_id IN (
    SELECT run_id FROM runs WHERE finished_at IS NOT NULL AND finished_at < $before LIMIT $limit)`;
// Queued runs count per location, leased ones per agent. Each half reads its own partial index, as
// QUEUE_STATS below: one statement over both states read every run the location kept for a day.
const LOCATION_LOAD = `
  SELECT 'queued' AS state, NULL AS holder, COUNT(*) AS n FROM runs WHERE state = 'queued' AND location_id = $locationId
  UNION ALL
  SELECT 'leased' AS state, agent_id AS holder, COUNT(*) AS n FROM runs WHERE state = 'leased' AND location_id = $locationId
  GROUP BY agent_id`;
// Each half reads its own partial index (runs_claim for queued, runs_lease_expiry for leased), so
// a scrape costs as much as the open runs, never the finished ones kept for a day.
const QUEUE_STATS = `
  SELECT l.id AS location_id, COALESCE(q.n, 0) AS queued, COALESCE(r.n, 0) AS leased, q.oldest AS oldest
  FROM private_locations l
  LEFT JOIN (SELECT location_id, COUNT(*) AS n, MIN(due_at) AS oldest FROM runs WHERE state = 'queued' GROUP BY location_id) q
    ON q.location_id = l.id
  LEFT JOIN (SELECT location_id, COUNT(*) AS n FROM runs WHERE state = 'leased' GROUP BY location_id) r
    ON r.location_id = l.id`;

// Reads the runs_finished index over the window only: a few seconds of finished runs, never the day
// kept. Exported for the plan test (test/service/run-queue-plans.test.ts).
export const OUTCOMES_SINCE = `
  SELECT location_id, check_class,
    SUM(CASE WHEN state = 'completed' THEN 1 ELSE 0 END) AS delivered,
    SUM(CASE WHEN state = 'expired' AND end_reason = $shedReason THEN 1 ELSE 0 END) AS shed
  FROM runs WHERE finished_at IS NOT NULL AND finished_at > $since GROUP BY location_id, check_class`;

/** The queue's reads for metrics and the console, for the plan test (test/service/run-queue-plans.test.ts). */
export const RUN_QUEUE_READS = { locationLoad: LOCATION_LOAD, queueStats: QUEUE_STATS } as const;

export class SqlRunRepo implements RunRepo {
  readonly #db: SqlDatabase;
  readonly #sql: ReturnType<typeof dialectStatements>;

  constructor(db: SqlDatabase) {
    this.#db = db;
    this.#sql = dialectStatements(dialectSql(db.dialect));
  }

  async enqueue(run: NewRun, now: string): Promise<{ run: Run; superseded: string[] }> {
    return (await this.enqueueMany([run], now))[0] as { run: Run; superseded: string[] };
  }

  async enqueueMany(runs: readonly NewRun[], now: string): Promise<Array<{ run: Run; superseded: string[] }>> {
    if (runs.length === 0) return [];
    return this.#db.transaction(async () => {
      const superseded = await this.#supersedeBefore(runs, now);
      const out: Array<{ run: Run; superseded: string[] }> = [];
      for (const run of runs) out.push(await this.#insertQueued(run, now, superseded));
      return out;
    }, READ_COMMITTED);
  }

  /**
   * What each scheduled run of the batch supersedes, keyed by pairKey: one statement for the batch
   * rather than one per run. A batch naming a pair twice (its later run supersedes the earlier,
   * inserted in the same batch) takes the statement per run instead, in order.
   */
  async #supersedeBefore(runs: readonly NewRun[], now: string): Promise<Map<string, SupersededRow[]> | undefined> {
    const scheduled = runs.filter((run) => !run.sessionId);
    if (new Set(scheduled.map((r) => pairKey(r.checkId, r.locationId))).size < scheduled.length) return undefined;
    if (scheduled.length === 0) return new Map();
    const pairs = JSON.stringify(scheduled.map((r) => ({ c: r.checkId, l: r.locationId, d: r.dueAt })));
    const rows = await this.#db.all<SupersededRow & { check_id: string; location_id: string }>(
      this.#sql.supersedeMany,
      { pairs, now },
    );
    return Map.groupBy(rows, (row) => pairKey(row.check_id, row.location_id));
  }

  /** `superseded`: the batch's answer (#supersedeBefore), or undefined to supersede for this run alone. */
  async #insertQueued(
    run: NewRun,
    now: string,
    superseded: Map<string, SupersededRow[]> | undefined,
  ): Promise<{ run: Run; superseded: string[] }> {
    const ended = await this.#supersededBy(run, now, superseded);
    const { runId, accountId, checkId, locationId, checkType, checkClass, dueAt, startBy, timeoutMs } = run;
    await this.#db.run(INSERT, {
      ...{ runId, accountId, checkId, locationId, checkType, checkClass, dueAt, startBy, timeoutMs, now },
      checkJson: JSON.stringify(run.check),
      runtimeId: runtimeNeededBy(run.check),
      sessionId: run.sessionId ?? null,
    });
    return { run: queuedRun(run, now), superseded: ended };
  }

  async #supersededBy(run: NewRun, now: string, batch: Map<string, SupersededRow[]> | undefined): Promise<string[]> {
    // A session's run is extra, not the pair's next slot: it supersedes nothing (and nothing supersedes it).
    if (run.sessionId) return [];
    const rows = batch
      ? (batch.get(pairKey(run.checkId, run.locationId)) ?? [])
      : await this.#db.all<SupersededRow>(this.#sql.supersede, {
          checkId: run.checkId,
          locationId: run.locationId,
          dueAt: run.dueAt,
          now,
        });
    return rows.map((r) => r.run_id);
  }

  async get(runId: string): Promise<Run | undefined> {
    const row = await this.#db.get<RunRow>(GET, [runId]);
    return row && toRun(row);
  }

  async getManyWithRetryLink(runIds: readonly string[]): Promise<Map<string, RunWithRetryLink>> {
    if (runIds.length === 0) return new Map();
    const rows = await this.#db.all<RunRow>(this.#sql.getMany, { runIds: JSON.stringify(runIds) });
    return new Map(rows.map((row) => [row.run_id, { run: toRun(row), retryLink: retryLinkOf(row) }]));
  }

  async getForAccount(accountId: string, runId: string): Promise<Run | undefined> {
    const row = await this.#db.get<RunRow>(GET_FOR_ACCOUNT, [runId, accountId]);
    return row && toRun(row);
  }

  async claim(req: ClaimRequest): Promise<Run[]> {
    const uptime = Math.max(0, Math.floor(req.slots.uptime ?? 0));
    const heavy = Math.max(0, Math.floor(req.slots.heavy ?? 0));
    if ((uptime === 0 && heavy === 0) || req.checkTypes.length === 0) return [];
    const params = {
      agentId: req.agentId,
      leaseExpiresAt: req.leaseExpiresAt,
      locationId: req.locationId,
      checkTypes: JSON.stringify(req.checkTypes),
      runtimes: JSON.stringify(req.runtimes ?? []),
      now: req.now,
      uptime,
      heavy,
    };
    const sql = req.order === 'newest' ? this.#sql.claimNewest : this.#sql.claim;
    const rows = await this.#oneStatement(() => this.#db.all<RunRow>(sql, params));
    return rows.map(toRun).sort(byDueAt);
  }

  async shedLate(req: ClaimRequest): Promise<number> {
    if (req.checkTypes.length === 0) return 0;
    const params = {
      locationId: req.locationId,
      checkTypes: JSON.stringify(req.checkTypes),
      runtimes: JSON.stringify(req.runtimes ?? []),
      now: req.now,
      endReason: SHED_LATE_REASON,
    };
    return (await this.#oneStatement(() => this.#db.run(this.#sql.shedLate, params))).changes;
  }

  async shedLateAndClaim(req: ClaimRequest): Promise<{ shed: number; runs: Run[] }> {
    return this.#db.transaction(
      async () => ({ shed: await this.shedLate(req), runs: await this.claim(req) }),
      READ_COMMITTED,
    );
  }

  async heartbeat(agentId: string, leases: readonly LeaseRef[], leaseExpiresAt: string): Promise<HeartbeatOutcome[]> {
    return this.#db.transaction(async () => {
      const outcomes: HeartbeatOutcome[] = [];
      for (const lease of leases) outcomes.push(await this.#extendOne(agentId, lease, leaseExpiresAt));
      return outcomes;
    }, READ_COMMITTED);
  }

  async #extendOne(agentId: string, lease: LeaseRef, leaseExpiresAt: string): Promise<HeartbeatOutcome> {
    const key = { runId: lease.runId, leaseId: lease.leaseId, agentId };
    const extended = await this.#db.get<{ lease_expires_at: string }>(EXTEND, { ...key, leaseExpiresAt });
    if (extended) return { ...lease, state: 'active', leaseExpiresAt: extended.lease_expires_at };
    const held = await this.#db.get<{ cancel_requested: number; lease_expires_at: string }>(LEASE_OF, key);
    if (held?.cancel_requested === 1) return { ...lease, state: 'cancelled', leaseExpiresAt: held.lease_expires_at };
    return { ...lease, state: 'lost', leaseExpiresAt: null };
  }

  /** No row read back: the result path, which calls this per result, has the run already. */
  async finish(runId: string, now: string): Promise<boolean> {
    return (await this.#db.run(FINISH, { runId, now })).changes > 0;
  }

  async release(agentId: string, leases: readonly LeaseRef[] | undefined, now: string): Promise<Run[]> {
    const params = { agentId, now, cancelReason: CANCELLED_WHILE_RUNNING };
    const rows = await this.#db.transaction(async () => {
      if (leases === undefined) return this.#db.all<RunRow>(RELEASE_ALL, params);
      const released: RunRow[] = [];
      for (const l of leases)
        released.push(...(await this.#db.all<RunRow>(RELEASE_ONE, { ...params, runId: l.runId, leaseId: l.leaseId })));
      return released;
    }, READ_COMMITTED);
    return rows.map(toRun).filter((r) => r.state === 'queued');
  }

  async requeueExpiredLeases(now: string): Promise<{ requeued: Run[]; abandoned: Run[] }> {
    const params = {
      now,
      cancelReason: 'cancelled; its agent stopped heartbeating before confirming it',
      maxAttempts: MAX_EXPIRED_LEASES,
      abandonReason: `its agent stopped heartbeating in each of ${MAX_EXPIRED_LEASES} leases; not handed out again (does the check crash its agent?)`,
    };
    const runs = (await this.#oneStatement(() => this.#db.all<RunRow>(REQUEUE_EXPIRED, params))).map(toRun);
    return { requeued: runs.filter((r) => r.state === 'queued'), abandoned: runs.filter((r) => r.state === 'expired') };
  }

  async listStaleQueued(dueBefore: string, limit: number): Promise<Run[]> {
    return (await this.#db.all<RunRow>(LIST_STALE, { dueBefore, limit })).map(toRun);
  }

  async expireQueued(runId: string, endReason: string, now: string): Promise<boolean> {
    return (await this.#db.run(EXPIRE_QUEUED, { runId, endReason, now })).changes > 0;
  }

  async cancel(accountId: string, runId: string, endReason: string, now: string): Promise<Run | undefined> {
    return this.#db.transaction(async () => {
      if ((await this.#db.run(CANCEL_QUEUED, { runId, accountId, endReason, now })).changes === 0) {
        await this.#db.run(REQUEST_CANCEL, { runId, accountId });
      }
      const row = await this.#db.get<RunRow>(GET_FOR_ACCOUNT, [runId, accountId]);
      return row && toRun(row);
    }, READ_COMMITTED);
  }

  async cancelForCheck(
    accountId: string,
    checkId: string,
    endReason: string,
    now: string,
    keepLocationIds: readonly string[] = [],
  ): Promise<number> {
    const keep = JSON.stringify(keepLocationIds);
    return this.#db.transaction(async () => {
      const queued = await this.#db.run(this.#sql.cancelCheckQueued, { checkId, accountId, endReason, now, keep });
      const leased = await this.#db.run(this.#sql.cancelCheckLeased, { checkId, accountId, keep });
      return queued.changes + leased.changes;
    }, READ_COMMITTED);
  }

  async pruneFinished(before: string, limit: number): Promise<number> {
    return (await this.#db.run(PRUNE, { before, limit })).changes;
  }

  async locationLoad(locationId: string): Promise<LocationLoad> {
    const rows = await this.#db.all<{ state: string; holder: string | null; n: number }>(LOCATION_LOAD, { locationId });
    const load: LocationLoad = { queued: 0, leasedByAgent: {} };
    for (const row of rows) {
      if (row.state === 'queued') load.queued += row.n;
      else if (row.holder) load.leasedByAgent[row.holder] = row.n;
    }
    return load;
  }

  async outcomesSince(since: string): Promise<LocationRunOutcome[]> {
    const rows = await this.#db.all<{ location_id: string; check_class: CheckClass; delivered: number; shed: number }>(
      OUTCOMES_SINCE,
      { since, shedReason: SHED_LATE_REASON },
    );
    return rows.map((r) => ({
      locationId: r.location_id,
      checkClass: r.check_class,
      delivered: r.delivered,
      shed: r.shed,
    }));
  }

  async queueStats(): Promise<LocationQueueStats[]> {
    const rows = await this.#db.all<{ location_id: string; queued: number; leased: number; oldest: string | null }>(
      QUEUE_STATS,
    );
    return rows.map((r) => ({
      locationId: r.location_id,
      queued: r.queued,
      leased: r.leased,
      oldestQueuedDueAt: r.oldest,
    }));
  }

  /**
   * A claim or sweep is one statement, atomic on its own. On PostgreSQL it runs in an explicit READ
   * COMMITTED transaction whatever the server's default isolation, so a claim never fails with a
   * serialization error; on SQLite it runs as it is, without a BEGIN/COMMIT around it.
   */
  #oneStatement<T>(statement: () => Promise<T>): Promise<T> {
    return this.#db.dialect === 'postgres' ? this.#db.transaction(statement, READ_COMMITTED) : statement();
  }
}
