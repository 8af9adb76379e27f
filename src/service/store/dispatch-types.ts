/**
 * Repositories of the dispatcher (runs, agents, error reports). Kept apart from store.ts so the
 * dispatcher's persistence can grow without crowding the public API's.
 * Owned by the dispatcher; see docs/protocol.md.
 *
 * Every state change of a run is one repository method (one SQL statement or one transaction), so
 * two agents, the sweeper and a user's cancel can never interleave halfway through a transition.
 * Times in and out are ISO 8601 strings in UTC (`Date#toISOString()`), which also sort correctly as
 * text.
 */
import type { CheckClass, CheckType } from '../../shared/checks/types.ts';
import type { LeaseRef, LeaseState } from '../../shared/protocol.ts';
import type { RunRetryLink } from './check-group-types.ts';
import type { Agent, ErrorReport, Run } from './store.ts';

/** What the scheduler knows when a run comes due; the repo adds state, lease fields and times. */
export interface NewRun
  extends Pick<
    Run,
    'runId' | 'accountId' | 'checkId' | 'locationId' | 'checkType' | 'checkClass' | 'dueAt' | 'timeoutMs' | 'check'
  > {
  /** The latest time a first attempt may start; later it is shed at claim time (RunRepo.shedLate). */
  startBy: string;
  /**
   * The check session the run belongs to (POST /v2/check-sessions/trigger). Its start deadline is
   * the moment it was queued: claims take it before every fresh scheduled run, and it is never shed.
   */
  sessionId?: string;
}

export interface ClaimRequest {
  locationId: string;
  agentId: string;
  /** Only runs of these types are handed out (the agent's registered capabilities). */
  checkTypes: readonly CheckType[];
  /**
   * Runtimes the agent carries: a run that needs a runtime (user code) is handed out only to an
   * agent that carries it. Absent or empty: only runs without user code.
   */
  runtimes?: readonly string[];
  /** At most this many runs per class. */
  slots: Record<CheckClass, number>;
  now: string;
  leaseExpiresAt: string;
  /**
   * Which runs first: the earliest start deadline (default), or, while the location is overloaded,
   * the latest, so the runs that start are the fresh ones and the old ones age out and are shed.
   */
  order?: 'deadline' | 'newest';
}

export interface HeartbeatOutcome extends LeaseRef {
  state: LeaseState;
  leaseExpiresAt: string | null;
}

export interface RunWithRetryLink {
  run: Run;
  retryLink: RunRetryLink;
}

export interface RunRepo {
  /**
   * Inserts a queued run. In the same transaction, older runs of the same check and location that
   * are still queued and were never leased become `expired` with endReason `superseded by a newer
   * run`, so an outage does not build a backlog of stale runs. Returns the ids it superseded.
   */
  enqueue(run: NewRun, now: string): Promise<{ run: Run; superseded: string[] }>;
  /** `enqueue` of several runs in one transaction (a scheduler tick's due runs): all or none. */
  enqueueMany(runs: readonly NewRun[], now: string): Promise<Array<{ run: Run; superseded: string[] }>>;
  get(runId: string): Promise<Run | undefined>;
  /**
   * Runs with their place in a retry chain, by run id, in one read: what storing a batch of results
   * needs. Unknown ids are absent from the map.
   */
  getManyWithRetryLink(runIds: readonly string[]): Promise<Map<string, RunWithRetryLink>>;
  /** Account-scoped read for the public API. */
  getForAccount(accountId: string, runId: string): Promise<Run | undefined>;
  /**
   * Atomically leases queued runs to one agent, earliest start deadline first: a run moves from
   * `queued` to `leased` in a single statement, so two agents can never be handed the same run. A
   * first attempt whose deadline (`startBy`) passed is never handed out (shedLate ends it); a run
   * handed back after a lease is, as long as the queue TTL allows.
   */
  claim(req: ClaimRequest): Promise<Run[]>;
  /**
   * Sheds the runs the agent could have claimed (its location, check types and runtimes) that are
   * first attempts past their start deadline at `req.now`: they become `expired` with endReason
   * SHED_LATE_REASON. Returns how many.
   */
  shedLate(req: ClaimRequest): Promise<number>;
  /** `shedLate` then `claim`, in one transaction: a lease call commits once, not twice. */
  shedLateAndClaim(req: ClaimRequest): Promise<{ shed: number; runs: Run[] }>;
  /**
   * Extends each lease the agent still holds to `leaseExpiresAt`. A lease with a requested cancel is
   * not extended and reports `cancelled`; a lease that is no longer this agent's reports `lost`.
   */
  heartbeat(agentId: string, leases: readonly LeaseRef[], leaseExpiresAt: string): Promise<HeartbeatOutcome[]>;
  /**
   * A result arrived: a queued or leased run becomes `completed` (`cancelled` when a cancel had been
   * requested). Runs already finished are left as they are. Returns whether this call finished it.
   */
  finish(runId: string, now: string): Promise<boolean>;
  /**
   * Hands leases back (agent shutdown): the agent's leased runs go back to `queued` with
   * leaseAttempt + 1 (or become `cancelled` when a cancel was requested). `leases` undefined means
   * every lease the agent holds (deregister). Returns the runs that were re-queued.
   */
  release(agentId: string, leases: readonly LeaseRef[] | undefined, now: string): Promise<Run[]>;
  /**
   * Leases whose time ran out go back to `queued` with leaseAttempt + 1 (a cancel-requested one
   * becomes `cancelled`; one that lost its last allowed lease becomes `expired`, see
   * MAX_EXPIRED_LEASES). Returns the runs that were re-queued and those given up.
   */
  requeueExpiredLeases(now: string): Promise<{ requeued: Run[]; abandoned: Run[] }>;
  /** Queued runs due at or before `dueBefore` (the queue TTL cutoff), oldest first. */
  listStaleQueued(dueBefore: string, limit: number): Promise<Run[]>;
  /** Ends a run that is still queued as `expired` with a reason. False when it left the queue meanwhile. */
  expireQueued(runId: string, endReason: string, now: string): Promise<boolean>;
  /**
   * User cancel: a queued run becomes `cancelled` at once; a leased one gets cancelRequested (its
   * agent learns on its next heartbeat). Finished runs are returned unchanged.
   */
  cancel(accountId: string, runId: string, endReason: string, now: string): Promise<Run | undefined>;
  /**
   * Cancels the open runs of a check (deleted or deactivated), or only those at locations not in
   * `keepLocationIds` (the check was moved off them). Returns how many runs were touched.
   */
  cancelForCheck(
    accountId: string,
    checkId: string,
    endReason: string,
    now: string,
    keepLocationIds?: readonly string[],
  ): Promise<number>;
  /** Deletes finished runs that finished before `before`, at most `limit` per call. */
  pruneFinished(before: string, limit: number): Promise<number>;
  /** What a location has to do now: runs waiting in its queue, and the leased runs each agent holds. */
  locationLoad(locationId: string): Promise<LocationLoad>;
  /**
   * Every private location (of every account) with its open runs: how many are queued and leased,
   * and the due time of the oldest queued one. One aggregate query, for metrics scrapes and samples.
   */
  queueStats(): Promise<LocationQueueStats[]>;
  /**
   * Per location and check class with runs finished since `since`: how many completed and how many were shed past
   * their start deadline. Overload admission's measure of what a location delivers (dispatch/admission.ts).
   */
  outcomesSince(since: string): Promise<LocationRunOutcome[]>;
}

/** The due time of the newest slot enqueued for a (check, location) pair. */
export interface ScheduleCursor {
  checkId: string;
  locationId: string;
  dueAt: string;
}

/** Where each pair's schedule stands, for a scheduler that starts (src/service/dispatch/schedule-cursors.ts). */
export interface ScheduleCursorRepo {
  /** Moves each pair's cursor forward to `dueAt`, never back (an old leader may save late). */
  save(cursors: readonly ScheduleCursor[]): Promise<void>;
  /**
   * Each pair's newest due time: its saved cursor, or a newer run that is still open or finished at
   * or after `finishedSince` (the runs enqueued since the last save), whichever is later.
   */
  newestDueTimes(finishedSince: string): Promise<ScheduleCursor[]>;
}

export interface LocationQueueStats {
  locationId: string;
  queued: number;
  leased: number;
  /** due_at of the oldest queued run; null when nothing is queued. */
  oldestQueuedDueAt: string | null;
}

/** One minute of a location's queue, as GET /v1/private-locations/{id}/metrics reports it. */
export interface LocationMetricSample {
  locationId: string;
  /** The start of the minute sampled (ISO 8601): one sample per location and minute. */
  sampledAt: string;
  queueSize: number;
  /** Age in seconds of the oldest queued run; 0 when nothing is queued. */
  oldestQueuedSeconds: number;
}

export interface LocationMetricsRepo {
  /**
   * Records the samples of one minute. A location that already has a sample for that minute (taken
   * by another replica) keeps it. Returns how many were recorded.
   */
  record(samples: readonly LocationMetricSample[]): Promise<number>;
  /** A location's samples with from <= sampledAt <= to, oldest first. */
  list(locationId: string, from: string, to: string): Promise<LocationMetricSample[]>;
  /** Deletes samples taken before `before`; returns how many. */
  prune(before: string): Promise<number>;
}

/** What a location's runs of one class came to in a window: completed, and shed past their start deadline. */
export interface LocationRunOutcome {
  locationId: string;
  checkClass: CheckClass;
  delivered: number;
  shed: number;
}

export interface LocationLoad {
  queued: number;
  /** Agent id → runs it holds a lease on. */
  leasedByAgent: Record<string, number>;
}

export interface AgentRegistration {
  id: string;
  locationId: string;
  version: string;
  hostname: string;
  checkTypes: CheckType[];
  runtimes: string[];
}

export interface AgentRepo {
  /** Inserts or refreshes the agent (clears goneAt, sets lastSeenAt = now, keeps registeredAt). */
  upsert(agent: AgentRegistration, now: string): Promise<Agent>;
  get(agentId: string): Promise<Agent | undefined>;
  listByLocation(locationId: string): Promise<Agent[]>;
  touch(agentId: string, now: string): Promise<void>;
  markGone(agentId: string, now: string): Promise<void>;
}

export interface ErrorReportRepo {
  /** Records a report token (by hash) for a location; keeps the existing row if it is there. */
  ensureToken(locationId: string, tokenHash: string, now: string): Promise<void>;
  /** The location a report token belongs to, or undefined. */
  findLocationByToken(tokenHash: string): Promise<string | undefined>;
  /** Stores events of one envelope; keeps only the newest `keep` reports of the location. */
  insert(
    locationId: string,
    events: Record<string, unknown>[],
    receivedAt: string,
    keep: number,
  ): Promise<ErrorReport[]>;
  /** Newest first. */
  list(locationId: string, limit: number): Promise<ErrorReport[]>;
}

export type { Agent, ErrorReport, Run };
