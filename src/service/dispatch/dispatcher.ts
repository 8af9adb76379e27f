/**
 * The dispatcher: the service side of the agent job protocol (docs/protocol.md).
 *
 * It turns due checks into runs, hands runs to agents under leases, keeps leases alive on
 * heartbeats, takes results once, and sweeps: leases whose agent stopped heartbeating go back to
 * the queue, runs nobody took within the queue TTL expire with a reason.
 *
 * State lives in the store (runs, agents); only the held lease requests live in memory, so a
 * restarted service loses nothing but open long-polls, which agents simply repeat.
 */
import type { Log } from '../../shared/log.ts';
import { type CheckClass, type CheckType, checkClassOf } from '../../shared/checks/types.ts';
import {
  type DeregisterRequest,
  type HeartbeatRequest,
  type HeartbeatResponse,
  type Job,
  type LeaseRef,
  type LeaseRequest,
  type LeaseResponse,
  PROTOCOL_VERSION,
  type RegisterRequest,
  type RegisterResponse,
  type ReleaseRequest,
  type ResultOutcome,
  type RunResult,
  type SubmitResultBatchRequest,
  type SubmitResultBatchResponse,
  type SubmitResultRequest,
  type SubmitResultResponse,
} from '../../shared/protocol.ts';
import { OverloadAdmission } from './admission.ts';
import { replayPendingResults } from '../alerting/status-replay.ts';
import { appliesToStatus, CheckStatusService, type StoredResultEvent } from '../alerting/status-service.ts';
import { toCheckDefinition } from '../checks/definition.ts';
import { groupOf } from '../checks/group-of.ts';
import { suiteJobTimeoutMs } from '../checks/playwright-check-schema.ts';
import { userCodeContextOf } from '../checks/user-code.ts';
import { type CertificateReads, certificatesOncePerBatch, clientTlsOf, openTlsIn } from '../checks/client-tls.ts';
import type { ServiceConfig } from '../config.ts';
import { InProcessRunSignals } from '../coordination/in-process.ts';
import type { RunSignals } from '../coordination/types.ts';
import { BadRequestError, ConflictError, NotFoundError, UnauthorizedError } from '../http/errors.ts';
import type { SecretBox } from '../secrets/box.ts';
import { openSecretsIn, sealSecretsIn } from '../secrets/variables.ts';
import type { RunRetryLink } from '../store/check-group-types.ts';
import type { NewRun, RunWithRetryLink } from '../store/dispatch-types.ts';
import type { Agent, ErrorReport, PrivateLocation, Run, Store, StoredCheck } from '../store/store.ts';
import { timeOrderedId } from '../store/time-ordered-id.ts';
import { type DefinitionReads, readsOncePerBatch } from './batch-reads.ts';
import { decodeBody, EnvelopeError, eventsOf, parseEnvelope } from './envelope.ts';
import { errorReportingDsn, hashReportToken, reportTokenFor } from './report-token.ts';
import type { ResultPolicy, ResultOutcome as RetryOutcome } from './retries.ts';
import { SessionWaiters } from './session-waiters.ts';
import { RUN_TIMEOUT_MS, startByOf } from './timeouts.ts';
import { WaitList } from './waiters.ts';

export type DispatchLog = Log;

export interface DispatcherOptions {
  store: Store;
  config: ServiceConfig;
  log: DispatchLog;
  /** Clock for run and lease times (tests move it to expire leases without waiting). */
  now?: () => number;
  /** How often the sweeper looks for expired leases and stale queued runs. */
  sweepIntervalMs?: number;
  /** Decides whether a failed result is retried (FINAL or ATTEMPT) and enqueues due retries; see ./retries.ts. */
  resultPolicy?: ResultPolicy;
  /** Keeps check statuses and alerts as results are stored; one over the store by default. */
  statuses?: CheckStatusService;
  /** A stored result raised an alert (committed): the fan-out should look now. */
  alertsRaised?: () => void;
  /** Counts lease expiries and stored results for /metrics (metrics/service-metrics.ts). */
  counters?: DispatchCounters;
  /** Announces claimable runs to every replica's held lease requests; in-process by default. */
  signals?: RunSignals;
}

/** What the dispatcher reports as it happens; the service's metrics count it. */
export interface DispatchCounters {
  /** Leases that ran out without a heartbeat: their runs were queued again or given up. */
  leasesExpired(runs: readonly Run[]): void;
  /** A result was stored for the run (not a duplicate). */
  resultStored(run: Run): void;
  /** Runs that ended `expired` without running, and why. */
  runsExpired(locationId: string, reason: RunExpiryReason, count: number): void;
  /** Due scheduled runs not enqueued: their location was overloaded (./admission.ts). */
  runsSkipped(locationId: string, reason: 'overload', count: number): void;
}

/**
 * Why a run expired: nobody leased it within JOB_QUEUE_TTL_SECONDS, a newer run of its check came
 * due while it still waited, no agent could start it before its start deadline (shed under
 * overload), or its agents died in each of its allowed leases.
 */
export type RunExpiryReason = 'queue_ttl' | 'superseded' | 'start_deadline' | 'lease_attempts';

/** Finished runs are kept this long for GET /v1/check-runs/{id} and diagnosis, then pruned. */
export const RUN_RETENTION_MS = 24 * 60 * 60 * 1000;
/** Newest error reports kept per location. */
export const ERROR_REPORTS_KEPT = 500;
const PRUNE_EVERY_MS = 60_000;
/**
 * The sweep replays results pending their status update for this long: a live submit applies its
 * own within milliseconds, so an older one was left by a failed update (or a dead replica).
 */
const REPLAY_AFTER_MS = 60_000;
const STALE_BATCH = 500;
const TOUCH_EVERY_MS = 1000;
/** How long a location counts as overloaded after it last shed a run: the shortest check interval. */
const OVERLOAD_HOLD_MS = 10_000;
/**
 * The most results one result-batches call may carry (RegisterResponse.resultBatchMax): enough that a
 * busy agent's round trips and commits stop being per run, few enough that one transaction stays short.
 */
export const RESULT_BATCH_MAX = 100;

/** A result stored (or found stored already) by #takeResult, with what its after-commit work needs. */
interface StoredTaken {
  status: 'stored' | 'duplicate';
  runId: string;
  resultId: string;
  run: Run;
  check: StoredCheck;
  outcome: RetryOutcome | undefined;
  resultType: 'FINAL' | 'ATTEMPT';
  result: RunResult;
  location: PrivateLocation;
  now: string;
}

/** A result whose run the location does not have (results answers 404 for it). */
type TakenResult = StoredTaken | { status: 'unknown'; runId: string; message: string };

/** What storing a batch of results reads up front: its runs (by run id) and their checks (by check id). */
interface ResultReads {
  runs: Map<string, RunWithRetryLink>;
  checks: Map<string, StoredCheck>;
}

const iso = (ms: number): string => new Date(ms).toISOString();

/** A run the scheduler found due: which check, where, and when. */
export interface DueRun {
  check: StoredCheck;
  locationId: string;
  dueAtMs: number;
}

type SealedDefinition = NewRun['check'];

export class Dispatcher {
  readonly #store: Store;
  readonly #config: ServiceConfig;
  readonly #log: DispatchLog;
  readonly #now: () => number;
  readonly #sweepIntervalMs: number;
  readonly #resultPolicy: ResultPolicy | undefined;
  readonly #statuses: CheckStatusService;
  readonly #alertsRaised: () => void;
  readonly #counters: DispatchCounters | undefined;
  readonly #waiters = new WaitList();
  /** Completion requests of check sessions, woken as their runs' results are stored here. */
  readonly sessionWaiters = new SessionWaiters();
  readonly #signals: RunSignals;
  #sweepTimer: NodeJS.Timeout | undefined;
  #sweeping: Promise<void> | undefined;
  #lastPrune = 0;
  /**
   * Until when each location counts as overloaded: it shed runs, so its agents cannot keep up, and
   * claims there take the newest runs first (docs/protocol.md "Overload").
   */
  readonly #overloadedUntil = new Map<string, number>();
  /** Which due scheduled runs an overloaded location is offered at all (docs/protocol.md "Overload"). */
  readonly #admission: OverloadAdmission;
  /** Per location, when skipped runs were last logged and how many were skipped since (#countSkipped). */
  readonly #skippedUnlogged = new Map<string, { loggedAt: number; count: number }>();
  /** When each agent was last recorded as seen (#touch). */
  readonly #lastTouched = new Map<string, number>();

  constructor(opts: DispatcherOptions) {
    this.#store = opts.store;
    this.#config = opts.config;
    this.#log = opts.log;
    this.#now = opts.now ?? Date.now;
    this.#sweepIntervalMs = opts.sweepIntervalMs ?? 1000;
    this.#resultPolicy = opts.resultPolicy;
    this.#statuses = opts.statuses ?? new CheckStatusService({ store: opts.store });
    this.#alertsRaised = opts.alertsRaised ?? (() => {});
    this.#counters = opts.counters;
    this.#signals = opts.signals ?? new InProcessRunSignals();
    this.#admission = new OverloadAdmission({
      outcomesSince: (since) => this.#store.runs.outcomesSince(since),
      now: this.#now,
      shedHereLately: () => this.#shedHereLately(),
    });
    // Runs announced here or by another replica wake this replica's held requests.
    this.#signals.subscribe({
      announced: (locationId, runs) => this.#waiters.notify(locationId, runs),
      missed: () => this.#waiters.wakeAll(),
    });
  }

  /** Accepts lease requests and starts the sweeper. */
  async start(): Promise<void> {
    this.#waiters.reopen();
    this.sessionWaiters.reopen();
    await this.startSweeper();
  }

  /** Stops the sweeper and answers every held lease request with no jobs. */
  async stop(): Promise<void> {
    this.#waiters.close();
    this.sessionWaiters.close();
    await this.stopSweeper();
  }

  /** The sweeps (lease expiry, queue TTL, pruning): leader work, once across replicas. */
  async startSweeper(): Promise<void> {
    if (this.#sweepTimer) return;
    // A service that died between storing a result and applying it to the check's status left it
    // pending: applied now, before anything newer, so its alert is not lost.
    await this.#replayPending();
    // A 1 s tick is enough: both sweep queries are index range scans that find nothing most of the
    // time, and a lease or queue TTL measured in tens of seconds does not need finer resolution.
    this.#sweepTimer = setInterval(() => void this.sweep(), this.#sweepIntervalMs);
    this.#sweepTimer.unref();
  }

  /** Stops the sweeper; resolves when a sweep in progress has finished. */
  async stopSweeper(): Promise<void> {
    if (this.#sweepTimer) clearInterval(this.#sweepTimer);
    this.#sweepTimer = undefined;
    await this.#sweeping;
  }

  /** Replayed results may raise alerts: the fan-out is told, as for a live result. */
  async #replayPending(storedBefore?: string): Promise<number> {
    const replayed = await replayPendingResults({
      store: this.#store,
      statuses: this.#statuses,
      log: this.#log,
      storedBefore,
    });
    if (replayed > 0) this.#alertsRaised();
    return replayed;
  }

  /** Held lease requests right now (for tests and diagnostics). */
  get waitingRequests(): number {
    return this.#waiters.size;
  }

  // ---------------------------------------------------------------------------------------------
  // Runs

  /** Creates the run of `check` at `locationId` due at `dueAtMs` and wakes agents that could take it. */
  async enqueue(check: StoredCheck, locationId: string, dueAtMs: number, retryLink?: RunRetryLink): Promise<Run> {
    const newRun = await this.#newRun(check, locationId, dueAtMs, this.#definitionOf(check));
    const enqueued = await this.#store.runs.enqueue(newRun, iso(this.#now()));
    if (retryLink) await this.#store.runRetries.setLink(enqueued.run.runId, retryLink);
    this.#enqueued([enqueued]);
    return enqueued.run;
  }

  /**
   * A check session's runs of `check`, one per location, due now and claimed before every scheduled
   * run; `record` stores the session in the same transaction, so no run exists without its session.
   */
  async enqueueSession(
    check: StoredCheck,
    locationIds: readonly string[],
    sessionId: string,
    record: (runs: readonly Run[]) => Promise<void>,
  ): Promise<Run[]> {
    const definition = this.#definitionOf(check);
    const nowMs = this.#now();
    const newRuns = await Promise.all(locationIds.map((l) => this.#newRun(check, l, nowMs, definition, sessionId)));
    const enqueued = await this.#store.transaction(async () => {
      const made = await this.#store.runs.enqueueMany(newRuns, iso(nowMs));
      await record(made.map((e) => e.run));
      return made;
    });
    this.#enqueued(enqueued);
    return enqueued.map((e) => e.run);
  }

  /**
   * The scheduler's due runs of one tick, in one transaction: a commit per run was the service's
   * bottleneck at hundreds of runs a second. A check due at several locations is resolved once. A run
   * whose definition cannot be built is logged and left out; the others are enqueued. Under overload,
   * only the share its agents can run is admitted at all (./admission.ts).
   */
  async enqueueDue(offered: readonly DueRun[]): Promise<Run[]> {
    const { admitted: due, skipped } = await this.#admission.select(offered);
    this.#countSkipped(skipped);
    const definitions = new Map<string, Promise<SealedDefinition>>();
    const reads = readsOncePerBatch(this.#store);
    const certificates = certificatesOncePerBatch(this.#store.clientCertificates);
    const definitionOf = (check: StoredCheck) =>
      definitions.get(check.id) ??
      definitions.set(check.id, this.#definitionOf(check, reads, certificates)).get(check.id)!;
    const built = await Promise.allSettled(
      due.map((d) => this.#newRun(d.check, d.locationId, d.dueAtMs, definitionOf(d.check))),
    );
    const newRuns: NewRun[] = [];
    built.forEach((b, i) => {
      if (b.status === 'fulfilled') newRuns.push(b.value);
      else
        this.#log.error({ err: b.reason, checkId: due[i]?.check.id, locationId: due[i]?.locationId }, 'enqueue failed');
    });
    const enqueued = await this.#store.runs.enqueueMany(newRuns, iso(this.#now()));
    this.#enqueued(enqueued);
    return enqueued.map((e) => e.run);
  }

  /** The definition of `check` for a run: its group's settings and user code resolved, secrets sealed. */
  async #definitionOf(
    check: StoredCheck,
    reads: DefinitionReads = this.#store,
    certificates: CertificateReads = this.#store.clientCertificates,
  ): Promise<SealedDefinition> {
    const group = await groupOf(reads, check);
    // Secret values are sealed in the stored snapshot and opened only when the job is handed to an
    // agent (toJob).
    const definition = toCheckDefinition(check, group, await userCodeContextOf(reads, check, group));
    // A client certificate's key and passphrase arrive sealed and stay so until toJob.
    const tls = await clientTlsOf(certificates, check, definition);
    return sealSecretsIn(this.#store.secrets, tls ? { ...definition, tls } : definition);
  }

  async #newRun(
    check: StoredCheck,
    locationId: string,
    dueAtMs: number,
    definition: Promise<SealedDefinition>,
    sessionId?: string,
  ): Promise<NewRun> {
    // Heartbeats are pinged by the monitored job itself; no agent runs them (listSchedulable omits them).
    if (check.checkType === 'HEARTBEAT') throw new Error(`heartbeat check ${check.id} cannot be enqueued`);
    return {
      runId: timeOrderedId(),
      accountId: check.accountId,
      checkId: check.id,
      locationId,
      checkType: check.checkType,
      checkClass: checkClassOf(check.checkType),
      dueAt: iso(dueAtMs),
      // A session's run is due the moment it is made: a deadline already reached puts it ahead of
      // every fresh scheduled run in the claim's order, and session runs are never shed (runs.ts).
      // Counted from the enqueue when that is later than the due time: a slot missed during a
      // hand-over, enqueued by the new leader, gets its half interval from then (late, but run).
      startBy: sessionId
        ? iso(dueAtMs)
        : iso(startByOf(check, Math.max(dueAtMs, this.#now()), this.#config.queueTtlSeconds)),
      // A suite's limit follows its own global timeout (checks/playwright-check-schema.ts).
      timeoutMs:
        check.checkType === 'PLAYWRIGHT'
          ? suiteJobTimeoutMs(check.body)
          : (RUN_TIMEOUT_MS[check.checkType] ?? RUN_TIMEOUT_MS.API),
      // A snapshot: an edit to the check after this point applies from the next run on.
      check: await definition,
      ...(sessionId ? { sessionId } : {}),
    };
  }

  /**
   * Overload: due runs not admitted, counted at once and logged at most once a second per location
   * (the scheduler fires up to 20 batches a second).
   */
  #countSkipped(skipped: ReadonlyMap<string, number>): void {
    const now = this.#now();
    for (const [locationId, count] of skipped) {
      this.#counters?.runsSkipped(locationId, 'overload', count);
      const unlogged = this.#skippedUnlogged.get(locationId) ?? { loggedAt: Number.NEGATIVE_INFINITY, count: 0 };
      this.#skippedUnlogged.set(locationId, unlogged);
      unlogged.count += count;
      if (now - unlogged.loggedAt < 1000) continue;
      const share = (c: CheckClass) => Math.round(this.#admission.shareOf(locationId, c) * 1000) / 1000;
      this.#log.warn(
        { locationId, skipped: unlogged.count, admittedShare: { uptime: share('uptime'), heavy: share('heavy') } },
        'due runs skipped: the location is overloaded, so only the share its agents can run is enqueued',
      );
      unlogged.loggedAt = now;
      unlogged.count = 0;
    }
  }

  /** After the commit: superseded runs counted and logged, and agents of each location woken once. */
  #enqueued(enqueued: ReadonlyArray<{ run: Run; superseded: string[] }>): void {
    for (const { run, superseded } of enqueued) {
      if (superseded.length > 0) {
        this.#counters?.runsExpired(run.locationId, 'superseded', superseded.length);
        this.#log.warn(
          { checkId: run.checkId, locationId: run.locationId, superseded },
          'queued runs superseded by a newer run: no agent took them before the next one came due',
        );
      }
    }
    const byLocation = Map.groupBy(
      enqueued.map(({ run }) => run),
      (run) => run.locationId,
    );
    for (const [locationId, runs] of byLocation) this.#signals.announce(locationId, runs);
  }

  async getRun(accountId: string, runId: string): Promise<Run> {
    const run = await this.#store.runs.getForAccount(accountId, runId);
    if (!run) throw new NotFoundError(`Check run ${runId} was not found`);
    return run;
  }

  /** A queued run is cancelled at once; a leased one is flagged, and its agent learns on its next heartbeat. */
  async cancelRun(accountId: string, runId: string): Promise<Run> {
    const run = await this.#store.runs.cancel(
      accountId,
      runId,
      'cancelled by a user before it started',
      iso(this.#now()),
    );
    if (!run) throw new NotFoundError(`Check run ${runId} was not found`);
    return run;
  }

  /** Cancels a check's open runs (deleted or deactivated), or only those at locations not in `keepLocationIds`. */
  async cancelRunsOfCheck(
    accountId: string,
    checkId: string,
    reason: string,
    keepLocationIds?: readonly string[],
  ): Promise<number> {
    const n = await this.#store.runs.cancelForCheck(accountId, checkId, reason, iso(this.#now()), keepLocationIds);
    if (n > 0) this.#log.info({ checkId, runs: n, reason }, 'cancelled open runs of a check');
    return n;
  }

  // ---------------------------------------------------------------------------------------------
  // The agent protocol. `location` is the location whose key authenticated the call.

  async register(location: PrivateLocation, rawLocationKey: string, req: RegisterRequest): Promise<RegisterResponse> {
    if (req.protocolVersion !== PROTOCOL_VERSION) {
      throw new BadRequestError(
        `Protocol version ${req.protocolVersion} is not supported; this service speaks version ${PROTOCOL_VERSION}. Upgrade the agent or the service so they match.`,
      );
    }
    const existing = await this.#store.agents.get(req.agentId);
    if (existing && existing.locationId !== location.id) {
      throw new ConflictError(
        `Agent id ${req.agentId} is registered with another private location; start the agent with a new id`,
      );
    }
    const now = iso(this.#now());
    await this.#store.agents.upsert(
      {
        id: req.agentId,
        locationId: location.id,
        version: req.version,
        hostname: req.hostname,
        checkTypes: [...new Set(req.capabilities.checkTypes)],
        runtimes: [...new Set(req.capabilities.runtimes)],
      },
      now,
    );
    const token = reportTokenFor(rawLocationKey, location.id);
    await this.#store.errorReports.ensureToken(location.id, hashReportToken(token), now);
    this.#log.info(
      {
        agentId: req.agentId,
        locationId: location.id,
        version: req.version,
        hostname: req.hostname,
        checkTypes: req.capabilities.checkTypes,
      },
      existing ? 'agent registered again' : 'agent registered',
    );
    return {
      agentId: req.agentId,
      location: { id: location.id, slugName: location.slugName, name: location.name },
      leaseSeconds: this.#config.leaseSeconds,
      heartbeatSeconds: this.#config.heartbeatSeconds,
      maxWaitSeconds: this.#config.maxLeaseWaitSeconds,
      errorReportingDsn: errorReportingDsn(this.#config.publicUrl, location.id, token),
      resultBatchMax: RESULT_BATCH_MAX,
    };
  }

  /**
   * Claims what the agent can take right now; if nothing, holds the request until a run it could
   * take is announced, the wait is over, the client went away (`signal`) or the service stops.
   */
  async lease(location: PrivateLocation, req: LeaseRequest, signal?: AbortSignal): Promise<LeaseResponse> {
    const agent = await this.#requireAgent(location, req.agentId);
    await this.#touch(agent.id, this.#now());
    const waitMs = Math.max(0, Math.min(req.waitSeconds, this.#config.maxLeaseWaitSeconds)) * 1000;
    // Real time, not the injectable clock: this bounds how long a socket is held.
    const deadline = performance.now() + waitMs;
    const filter = { checkTypes: new Set<CheckType>(agent.checkTypes), slots: req.slots };
    for (;;) {
      if (signal?.aborted || this.#waiters.closed) return { jobs: [] };
      const seen = this.#waiters.version(location.id);
      const now = this.#now();
      const claim = {
        locationId: location.id,
        agentId: agent.id,
        checkTypes: agent.checkTypes,
        runtimes: agent.runtimes,
        slots: req.slots,
        now: iso(now),
        leaseExpiresAt: iso(now + this.#config.leaseSeconds * 1000),
        order: (this.#overloadedUntil.get(location.id) ?? 0) > now ? ('newest' as const) : ('deadline' as const),
      };
      const { shed, runs } = await this.#store.runs.shedLateAndClaim(claim);
      this.#countShed(claim.locationId, shed, now);
      if (runs.length > 0) {
        if (signal?.aborted) {
          // The client left between the claim and the answer: hand the runs straight back rather
          // than let them sit until their lease expires.
          await this.#handBack(
            agent.id,
            runs.map((r) => ({ runId: r.runId, leaseId: r.leaseId ?? '' })),
          );
          return { jobs: [] };
        }
        return { jobs: runs.map((run) => toJob(run, this.#store.secrets, now)) };
      }
      const remaining = deadline - performance.now();
      if (remaining <= 0) return { jobs: [] };
      // Something was announced while we claimed: try again instead of sleeping through it.
      if (this.#waiters.version(location.id) !== seen) continue;
      const outcome = await this.#waiters.wait(location.id, filter, remaining, signal);
      if (outcome !== 'woken') return { jobs: [] };
    }
  }

  /** Whether any location counts as overloaded here: this replica shed runs within OVERLOAD_HOLD_MS. */
  #shedHereLately(): boolean {
    const now = this.#now();
    for (const until of this.#overloadedUntil.values()) if (until > now) return true;
    return false;
  }

  /** Overload: first attempts this agent could take but not start by their deadline were ended; counted. */
  #countShed(locationId: string, shed: number, now: number): void {
    if (shed === 0) return;
    this.#overloadedUntil.set(locationId, now + OVERLOAD_HOLD_MS);
    this.#counters?.runsExpired(locationId, 'start_deadline', shed);
    this.#log.warn({ locationId, shed }, 'runs shed: the agents could not start them within half their interval');
  }

  /**
   * Records that the agent was seen, at most once a second per agent: a busy agent leases many times
   * a second, and a write per call cost a commit each for a time shown to the second.
   */
  async #touch(agentId: string, now: number): Promise<void> {
    if (now - (this.#lastTouched.get(agentId) ?? Number.NEGATIVE_INFINITY) < TOUCH_EVERY_MS) return;
    // Agents that went away without deregistering leave an entry; forget the old ones now and then.
    if (this.#lastTouched.size >= 1000)
      for (const [id, at] of this.#lastTouched) if (now - at > 60_000) this.#lastTouched.delete(id);
    this.#lastTouched.set(agentId, now);
    await this.#store.agents.touch(agentId, iso(now));
  }

  async heartbeat(location: PrivateLocation, req: HeartbeatRequest): Promise<HeartbeatResponse> {
    const agent = await this.#requireAgent(location, req.agentId);
    const now = this.#now();
    await this.#touch(agent.id, now);
    const leases = await this.#store.runs.heartbeat(agent.id, req.leases, iso(now + this.#config.leaseSeconds * 1000));
    return { leases };
  }

  async submitResult(location: PrivateLocation, req: SubmitResultRequest): Promise<SubmitResultResponse> {
    // No registration check here, unlike every other call: a result may come from the spool of an
    // agent process that has since restarted (new agentId) or deregistered. What makes it acceptable
    // is the location key and the run belonging to that location; the runId keeps it once-only.
    const taken = await this.#takeResult(location, req.result, await this.#readForResults([req.result.runId]));
    if (taken.status === 'unknown') throw new NotFoundError(taken.message);
    const event = await this.#afterCommit(taken, req.agentId, req.leaseId);
    if (event) await this.#applyStatuses([event]);
    return { status: taken.status, resultId: taken.resultId };
  }

  /**
   * Stores several results in one store transaction, each as submitResult would; the status updates
   * and alerts follow the commit, in the order sent. A run submitResult answers 404 for is `unknown`.
   */
  async submitResultBatch(
    location: PrivateLocation,
    req: SubmitResultBatchRequest,
  ): Promise<SubmitResultBatchResponse> {
    if (req.results.length > RESULT_BATCH_MAX) {
      throw new BadRequestError(
        `body/results has ${req.results.length} results; at most ${RESULT_BATCH_MAX} (resultBatchMax) are allowed per call`,
      );
    }
    // Built afresh by each attempt: PostgreSQL may run the transaction again after a serialization failure.
    const taken = await this.#store.transaction(async () => {
      const out: TakenResult[] = [];
      const reads = await this.#readForResults(req.results.map((item) => item.result.runId));
      for (const item of req.results) out.push(await this.#takeResult(location, item.result, reads));
      return out;
    });
    const outcomes: ResultOutcome[] = [];
    const events: StoredResultEvent[] = [];
    for (const [i, t] of taken.entries()) {
      if (t.status === 'unknown') {
        this.#log.debug({ runId: t.runId, agentId: req.agentId }, t.message);
        outcomes.push({ runId: t.runId, status: 'unknown' });
        continue;
      }
      const event = await this.#afterCommit(t, req.agentId, req.results[i]?.leaseId ?? '');
      if (event) events.push(event);
      outcomes.push({ runId: t.runId, status: t.status, resultId: t.resultId });
    }
    await this.#applyStatuses(events);
    return { outcomes };
  }

  /** The runs of a batch of results and their checks: a statement for the runs and one per account. */
  async #readForResults(runIds: readonly string[]): Promise<ResultReads> {
    const runs = await this.#store.runs.getManyWithRetryLink(runIds);
    const checks = new Map<string, StoredCheck>();
    for (const [accountId, read] of Map.groupBy(runs.values(), ({ run }) => run.accountId)) {
      const ids = read.map(({ run }) => run.checkId);
      for (const [id, check] of await this.#store.checks.getMany(accountId, ids)) checks.set(id, check);
    }
    return { runs, checks };
  }

  /**
   * Stores one result once (database work only, so it may run inside a batch's transaction): the
   * run must be of `location`, and its check must still exist (else the run is finished unstored).
   */
  async #takeResult(location: PrivateLocation, result: RunResult, reads: ResultReads): Promise<TakenResult> {
    const runId = result.runId;
    const read = reads.runs.get(runId);
    // Another location's run is reported exactly like a missing one, so ids cannot be probed.
    if (!read || read.run.locationId !== location.id)
      return { status: 'unknown', runId, message: `Run ${runId} was not found for this private location` };
    const { run, retryLink } = read;
    const now = iso(this.#now());
    const check = reads.checks.get(run.checkId);
    if (!check) {
      await this.#store.runs.finish(run.runId, now);
      return { status: 'unknown', runId, message: `The check of run ${runId} was deleted; the result is not stored` };
    }
    // A failed result may be an ATTEMPT to be retried rather than the FINAL one (./retries.ts). A
    // session's run is not retried: its one result is FINAL.
    const outcome = run.sessionId
      ? undefined
      : await this.#resultPolicy?.classify(run, retryLink, check, result, this.#now());
    const resultType = outcome?.resultType ?? 'FINAL';
    // The run, not the upload, says which check and type this was: an agent cannot file a result
    // under another check. One that moves the check's status is stored marked pending, so a crash
    // before the status update leaves it to be replayed (#replayPending).
    const stored = await this.#store.results.insertOnce({
      accountId: run.accountId,
      checkId: run.checkId,
      runId: run.runId,
      // The check's current name: a finished run no longer carries its snapshot.
      checkName: check.name,
      locationId: location.id,
      runLocation: location.slugName,
      attempts: outcome?.attempts ?? run.leaseAttempt,
      resultType,
      createdAt: now,
      pendingStatus: appliesToStatus(resultType, result) ? { dueAt: run.dueAt } : undefined,
      payload: { ...result, runId: run.runId, checkId: run.checkId, checkType: run.checkType },
    });
    await this.#store.runs.finish(run.runId, now);
    return {
      status: stored.status,
      runId,
      resultId: stored.id,
      run,
      check,
      outcome,
      resultType,
      result,
      location,
      now,
    };
  }

  /** What follows a stored result's commit: the retry plan and metrics; gives the status update it calls for. */
  async #afterCommit(t: StoredTaken, agentId: string, leaseId: string): Promise<StoredResultEvent | undefined> {
    if (t.status === 'duplicate') {
      this.#log.info({ runId: t.runId, agentId, leaseId }, 'duplicate result ignored');
      return undefined;
    }
    if (t.outcome) await this.#resultPolicy?.afterStored(t.run, t.outcome);
    this.#counters?.resultStored(t.run);
    if (t.run.sessionId) this.sessionWaiters.notify(t.run.sessionId);
    const { run, check, resultId, resultType, result } = t;
    return { run, check, resultId, resultType, result, runLocation: t.location.slugName, atMs: Date.parse(t.now) };
  }

  /**
   * Applies stored results to their checks' statuses, several in one transaction. The results are
   * stored either way: a status that failed to update is logged, not a failed upload, and replayed
   * by a later sweep; one that fails in a batch leaves the others to be applied one by one.
   */
  async #applyStatuses(events: readonly StoredResultEvent[]): Promise<void> {
    const [first] = events;
    if (!first) return;
    try {
      const alerts =
        events.length === 1 ? await this.#statuses.resultStored(first) : await this.#statuses.resultsStored(events);
      if (alerts.length > 0) this.#alertsRaised();
    } catch (err) {
      if (events.length > 1) {
        for (const e of events) await this.#applyStatuses([e]);
        return;
      }
      this.#log.error(
        { err, resultId: first.resultId, checkId: first.run.checkId },
        'check status could not be updated',
      );
    }
  }

  /** Hands leases back at once (agent shutdown); the runs are queued again for other agents. */
  async release(location: PrivateLocation, req: ReleaseRequest): Promise<{ released: string[] }> {
    const agent = await this.#requireAgent(location, req.agentId);
    if (req.leases.length > 0) {
      this.#log.info({ agentId: agent.id, leases: req.leases }, 'agent released leases');
    }
    const requeued = await this.#handBack(agent.id, req.leases);
    return { released: requeued.map((r) => r.runId) };
  }

  /** The agent is shutting down for good: whatever it still holds goes back to the queue. */
  async deregister(location: PrivateLocation, req: DeregisterRequest): Promise<Record<string, never>> {
    const agent = await this.#store.agents.get(req.agentId);
    // Deregistering twice (a retried call) is fine; deregistering another location's agent is not.
    if (!agent || agent.locationId !== location.id) throw this.#notRegistered(location, req.agentId);
    const now = iso(this.#now());
    await this.#handBack(agent.id, undefined);
    await this.#store.agents.markGone(agent.id, now);
    this.#log.info({ agentId: agent.id, locationId: location.id }, 'agent deregistered');
    return {};
  }

  async #handBack(agentId: string, leases: readonly LeaseRef[] | undefined): Promise<Run[]> {
    const requeued = await this.#store.runs.release(agentId, leases, iso(this.#now()));
    this.#announce(requeued);
    return requeued;
  }

  async #requireAgent(location: PrivateLocation, agentId: string): Promise<Agent> {
    const agent = await this.#store.agents.get(agentId);
    if (!agent || agent.locationId !== location.id || agent.goneAt !== null)
      throw this.#notRegistered(location, agentId);
    return agent;
  }

  #notRegistered(location: PrivateLocation, agentId: string): ConflictError {
    return new ConflictError(
      `Agent ${agentId} is not registered with private location "${location.slugName}"; register again (POST /agent/v1/register)`,
    );
  }

  #announce(runs: readonly Run[]): void {
    const byLocation = new Map<string, Run[]>();
    for (const run of runs) byLocation.set(run.locationId, [...(byLocation.get(run.locationId) ?? []), run]);
    for (const [locationId, list] of byLocation) this.#signals.announce(locationId, list);
  }

  // ---------------------------------------------------------------------------------------------
  // Sweeping

  /** One sweep: re-queue expired leases, expire stale queued runs, now and then prune old runs. */
  sweep(): Promise<void> {
    // Never two sweeps at once: the timer keeps ticking while a slow sweep is still running.
    this.#sweeping ??= this.#sweep()
      .catch((err: unknown) => this.#log.error({ err }, 'dispatch sweep failed'))
      .finally(() => {
        this.#sweeping = undefined;
      });
    return this.#sweeping;
  }

  async #sweep(): Promise<void> {
    const nowMs = this.#now();
    const now = iso(nowMs);
    const { requeued, abandoned } = await this.#store.runs.requeueExpiredLeases(now);
    this.#counters?.leasesExpired([...requeued, ...abandoned]);
    for (const r of abandoned) {
      this.#counters?.runsExpired(r.locationId, 'lease_attempts', 1);
      this.#log.error(
        { runId: r.runId, checkId: r.checkId, agentId: r.agentId, leaseAttempt: r.leaseAttempt },
        `run given up: ${r.endReason}`,
      );
    }
    if (requeued.length > 0) {
      this.#log.warn(
        { runs: requeued.map((r) => ({ runId: r.runId, agentId: r.agentId, leaseAttempt: r.leaseAttempt })) },
        'leases expired without a heartbeat; runs queued again for another agent',
      );
      this.#announce(requeued);
    }

    await this.#resultPolicy?.sweep(nowMs);

    const ttlMs = this.#config.queueTtlSeconds * 1000;
    for (;;) {
      const stale = await this.#store.runs.listStaleQueued(iso(nowMs - ttlMs), STALE_BATCH);
      if (stale.length === 0) break;
      const reasons = new Map<string, string>();
      for (const run of stale) {
        const key = `${run.locationId}\u0000${run.checkType}`;
        let reason = reasons.get(key);
        if (reason === undefined) {
          reason = await this.#queueExpiryReason(run, nowMs);
          reasons.set(key, reason);
        }
        if (await this.#store.runs.expireQueued(run.runId, reason, now))
          this.#counters?.runsExpired(run.locationId, 'queue_ttl', 1);
      }
      this.#log.warn({ runs: stale.length, reasons: [...new Set(reasons.values())] }, 'queued runs expired');
      if (stale.length < STALE_BATCH) break;
    }

    if (nowMs - this.#lastPrune >= PRUNE_EVERY_MS) {
      this.#lastPrune = nowMs;
      await this.#replayPending(iso(nowMs - REPLAY_AFTER_MS));
      const pruned = await this.#store.runs.pruneFinished(iso(nowMs - RUN_RETENTION_MS), 5000);
      if (pruned > 0) this.#log.debug({ pruned }, 'pruned finished runs');
    }
  }

  /** Says why nobody took the run, as far as the service can tell, so the user knows what to fix. */
  async #queueExpiryReason(run: Run, nowMs: number): Promise<string> {
    const location = await this.#store.locations.getById(run.locationId);
    const name = location?.slugName ?? run.locationId;
    const prefix = `not leased within ${this.#config.queueTtlSeconds}s: no agent of location "${name}" took it`;
    // An agent counts as connected when it called in within one long-poll plus one lease period.
    const since = iso(nowMs - (this.#config.maxLeaseWaitSeconds + this.#config.leaseSeconds) * 1000);
    const live = (await this.#store.agents.listByLocation(run.locationId)).filter(
      (a) => a.goneAt === null && a.lastSeenAt >= since,
    );
    if (live.length === 0) return `${prefix} (no agent was connected)`;
    if (!live.some((a) => a.checkTypes.includes(run.checkType))) {
      return `${prefix} (${live.length} agent(s) connected, none runs ${run.checkType} checks)`;
    }
    return `${prefix} (${live.length} agent(s) connected, all busy)`;
  }

  // ---------------------------------------------------------------------------------------------
  // Error reports

  /**
   * Stores the events of a Sentry envelope posted with a location's report token. The token must
   * belong to the location named in the path; the location API key is not a report token.
   */
  async ingestErrorEnvelope(
    locationId: string,
    sentryKey: string | undefined,
    body: Buffer,
    contentEncoding: string | undefined,
  ): Promise<ErrorReport[]> {
    if (!sentryKey)
      throw new UnauthorizedError('Missing sentry_key: use the errorReportingDsn from the register response');
    const owner = await this.#store.errorReports.findLocationByToken(hashReportToken(sentryKey));
    if (owner === undefined || owner !== locationId) {
      throw new UnauthorizedError(
        'The error report token was not accepted; use the errorReportingDsn from the register response',
      );
    }
    let events: Record<string, unknown>[];
    try {
      events = eventsOf(parseEnvelope(decodeBody(body, contentEncoding)));
    } catch (err) {
      if (err instanceof EnvelopeError) throw new BadRequestError(`The Sentry envelope is invalid: ${err.message}`);
      throw err;
    }
    return this.#store.errorReports.insert(locationId, events, iso(this.#now()), ERROR_REPORTS_KEPT);
  }
}

/**
 * The job of a run leased at `nowMs`; its snapshot's secret values opened for the agent. A run
 * enqueued ahead of its due time (the scheduler's SCHEDULE_AHEAD_MS) tells the agent when to start it.
 */
export function toJob(run: Run, secrets: SecretBox, nowMs: number): Job {
  return {
    runId: run.runId,
    leaseId: run.leaseId ?? '',
    leaseExpiresAt: run.leaseExpiresAt ?? '',
    leaseAttempt: run.leaseAttempt,
    dueAt: run.dueAt,
    startInMs: Math.max(0, Date.parse(run.dueAt) - nowMs),
    checkClass: run.checkClass,
    timeoutMs: run.timeoutMs,
    check: openTlsIn(secrets, openSecretsIn(secrets, run.check)),
  };
}
