import { randomUUID } from 'node:crypto';
import { EventEmitter, once } from 'node:events';
import os from 'node:os';
import PQueue from 'p-queue';
import { type CheckClass, type CheckType, checkClassOf } from '../shared/checks/types.ts';
import { EXIT } from '../shared/errors.ts';
import {
  type Job,
  type LeaseRef,
  PROTOCOL_VERSION,
  type RegisterResponse,
  type RunResult,
} from '../shared/protocol.ts';
import { VERSION } from '../shared/version.ts';
import { Backoff, type BackoffOptions, DELIVERY_BACKOFF, SERVICE_BACKOFF, sleep } from './backoff.ts';
import { agentErrorOutcome } from './checks/outcome.ts';
import type { CheckOutcome, CheckRunner } from './checks/runner.ts';
import { PermanentError, retryHintOf, type ServiceApi, UnauthorizedError } from './client.ts';
import { ResultDeliverer } from './deliverer.ts';
import type { HealthSnapshot, HealthSource } from './health.ts';
import { flushLogger, jobLogger, type Logger } from './logger.ts';
import type { Observability } from './observability.ts';
import type { ArtifactUploader } from './artifacts/uploader.ts';
import type { SandboxPool } from './sandbox/pool.ts';
import { registerActiveScrubber, scrubberForCheck } from './scrub/index.ts';
import { substituteVariables, withVariableNotes } from './checks/variables/index.ts';
import { UptimePrefetch } from './prefetch.ts';
import type { ResultSpool } from './spool.ts';

export interface AgentDaemonOptions {
  client: ServiceApi;
  spool: ResultSpool;
  /**
   * The agent's pino logger itself, not the shared Log: the daemon logs its fatal stop, derives each
   * run's child logger and flushes before it returns.
   */
  log: Logger;
  /** The check runners by type; main passes RUNNERS, tests pass fakes. */
  runners: ReadonlyMap<CheckType, CheckRunner>;
  uptimeConcurrency: number;
  jobConcurrency: number;
  shutdownGraceSeconds: number;
  useOsDnsResolver: boolean;
  /** Shown in the 401 message so the operator sees which service refused the key. */
  apiUrl: string;
  observability?: Observability;
  version?: string;
  agentId?: string;
  /**
   * Runtimes advertised at registration. Defaults to the sandbox pool's (the runtimes whose Node
   * runs, src/agent/runtimes.ts), else none.
   */
  runtimes?: string[];
  /** Sandboxes for user code, handed to runners; absent, checks with scripts report an error. */
  sandboxes?: SandboxPool;
  /** Uploads the files runs produce; absent, runners get no `artifacts` and keep none. */
  artifacts?: ArtifactUploader;
  /** Retry timing for register, lease and results (SERVICE_BACKOFF); tests shorten it. */
  backoff?: BackoffOptions;
  /** How long a run may ignore its abort before the daemon gives up on it and frees the slot. */
  abandonAfterAbortMs?: number;
}

/** One pool's state (uptime or heavy), for /metrics. */
export interface PoolState {
  /** Leased and not started: waiting for their due time, or for the pool to start them. */
  queued: number;
  running: number;
  /** The pool's concurrency (UPTIME_CONCURRENCY, JOB_CONCURRENCY). */
  slots: number;
  /** Slots not taken by a leased, unfinished job (one waiting for its due time takes none); a lease asks for these and the prefetch. */
  free: number;
}

export type AbortReason = 'cancelled' | 'lost' | 'timeout' | 'shutdown';

interface RunningJob {
  job: Job;
  controller: AbortController;
  reason: AbortReason | undefined;
  started: boolean;
}

/** The daemon's events, for /health, logs and tests (which await them instead of sleeping). */
export interface AgentDaemonEvents {
  registered: [RegisterResponse];
  leased: [Job[]];
  'job-started': [Job];
  'job-finished': [Job, RunResult | undefined];
  'result-delivered': [{ runId: string; status: 'stored' | 'duplicate' }];
  'result-spooled': [{ runId: string }];
  'result-rejected': [{ runId: string; message: string }];
  released: [LeaseRef[]];
  'slot-freed': [];
  /** Results wait for their upload in memory beyond the bound: no lease until fewer do. */
  'waiting-for-results': [{ pending: number }];
  /** A register or lease call failed; the next try comes after `delayMs`. */
  retrying: [{ call: 'register' | 'lease'; delayMs: number; unreachable: boolean }];
  stopping: [string];
  stopped: [number];
}

export function unauthorizedMessage(apiUrl: string): string {
  return `API_KEY was rejected by the service at ${apiUrl}: the key is wrong or was revoked; create a new key with POST /v1/private-locations/{id}/keys and restart`;
}

/**
 * How long to hold `job` before starting it: the service's `startInMs`, counted from when the job
 * arrived (`nowMs`), so the two clocks need not agree; then up to the next START_GRID_MS mark. Capped,
 * so a wrong figure cannot park a job for long.
 */
export function startDelayOf(job: Pick<Job, 'startInMs'>, nowMs = Date.now()): number {
  const ms = job.startInMs;
  if (typeof ms !== 'number' || !Number.isFinite(ms) || ms <= 0) return 0;
  const onGrid = Math.ceil((nowMs + Math.min(ms, MAX_START_DELAY_MS)) / START_GRID_MS) * START_GRID_MS;
  return onGrid - nowMs;
}

/** Far above the service's lead (SCHEDULE_AHEAD_MS), far below any check's interval. */
const MAX_START_DELAY_MS = 1_000;
/**
 * Jobs due within the same 20 ms start together, in one turn of the event loop: one wake-up per
 * job cost the agent half again its CPU per check (BENCHMARKS.md "Leasing ahead"), and a start at
 * most 20 ms after the due time is well inside what a check's timing shows.
 */
const START_GRID_MS = 20;

/**
 * The agent's main loop: register, long-poll for jobs one request at a time, run them in two pools,
 * heartbeat their leases and deliver results in order. `done` resolves with the exit code.
 */
export class AgentDaemon extends EventEmitter<AgentDaemonEvents> implements HealthSource {
  readonly agentId: string;
  readonly version: string;
  readonly #client: ServiceApi;
  readonly #spool: ResultSpool;
  readonly #log: Logger;
  readonly #runners: ReadonlyMap<CheckType, CheckRunner>;
  readonly #concurrency: Record<CheckClass, number>;
  readonly #graceMs: number;
  readonly #useOsDnsResolver: boolean;
  readonly #apiUrl: string;
  readonly #observability: Observability | undefined;
  readonly #runtimes: string[];
  readonly #sandboxes: SandboxPool | undefined;
  readonly #artifacts: ArtifactUploader | undefined;
  readonly #backoffOptions: BackoffOptions;
  readonly #abandonMs: number;
  readonly #deliverer: ResultDeliverer;
  readonly #queues: Record<CheckClass, PQueue>;
  readonly #running = new Map<string, RunningJob>();
  readonly #runningByClass: Record<CheckClass, number> = { uptime: 0, heavy: 0 };
  /** Of those, the jobs handed out ahead of their due time and waiting for it (see #holding). */
  readonly #waitingByClass: Record<CheckClass, number> = { uptime: 0, heavy: 0 };
  readonly #prefetch: UptimePrefetch;
  /** Aborted at stop: cuts the long-poll, register retries and backoff waits. */
  readonly #stopController = new AbortController();
  readonly #startedAt = Date.now();

  #registration: RegisterResponse | undefined;
  #stopping = false;
  #stopPromise: Promise<number> | undefined;
  #exitCode: number = EXIT.ok;
  #pollLoop: Promise<void> | undefined;
  #heartbeatTimer: NodeJS.Timeout | undefined;
  #heartbeatInFlight = false;
  #lastSuccessfulPollAt: Date | undefined;
  /** Last time the poll loop did something (or began a legitimate wait for a free slot). */
  #lastLoopProgressAt = Date.now();
  #waitingForSlot = false;
  #waitingForSpool = false;
  #waitingForResults = false;
  #currentPoll: { slots: Record<CheckClass, number>; refresh: AbortController } | undefined;
  #resolveDone!: (code: number) => void;
  /** Resolves with the process exit code once the daemon has stopped (by stop() or a fatal error). */
  readonly done: Promise<number>;

  constructor(options: AgentDaemonOptions) {
    super();
    this.agentId = options.agentId ?? randomUUID();
    this.version = options.version ?? VERSION;
    this.#client = options.client;
    this.#spool = options.spool;
    this.#log = options.log;
    this.#runners = options.runners;
    this.#concurrency = { uptime: options.uptimeConcurrency, heavy: options.jobConcurrency };
    this.#prefetch = new UptimePrefetch(options.uptimeConcurrency);
    this.#graceMs = options.shutdownGraceSeconds * 1000;
    this.#useOsDnsResolver = options.useOsDnsResolver;
    this.#apiUrl = options.apiUrl;
    this.#observability = options.observability;
    this.#runtimes = options.runtimes ?? options.sandboxes?.runtimeIds ?? [];
    this.#sandboxes = options.sandboxes;
    this.#artifacts = options.artifacts;
    this.#backoffOptions = options.backoff ?? SERVICE_BACKOFF;
    this.#abandonMs = options.abandonAfterAbortMs ?? 10_000;
    this.#queues = {
      uptime: new PQueue({ concurrency: options.uptimeConcurrency }),
      heavy: new PQueue({ concurrency: options.jobConcurrency }),
    };
    this.#deliverer = new ResultDeliverer({
      client: this.#client,
      spool: this.#spool,
      log: this.#log,
      backoff: {
        ...this.#backoffOptions,
        baseMs: Math.min(DELIVERY_BACKOFF.baseMs, this.#backoffOptions.baseMs),
        capMs: Math.min(DELIVERY_BACKOFF.capMs, this.#backoffOptions.capMs),
      },
    });
    this.#deliverer.on('delivered', (e) => this.emit('result-delivered', e));
    this.#deliverer.on('spooled', (e) => this.emit('result-spooled', e));
    this.#deliverer.on('rejected', (e) => this.emit('result-rejected', e));
    this.done = new Promise((resolve) => {
      this.#resolveDone = resolve;
    });
  }

  // ---- getters for /health and tests ----

  get registered(): boolean {
    return this.#registration !== undefined;
  }

  get registration(): RegisterResponse | undefined {
    return this.#registration;
  }

  get stopping(): boolean {
    return this.#stopping;
  }

  /** Runs leased by this agent and not finished (started or waiting in a pool). */
  get jobsRunning(): number {
    return this.#queues.uptime.pending + this.#queues.heavy.pending;
  }

  /** Leased and not started: waiting for their due time or for a free slot. */
  get jobsQueued(): number {
    const waiting = this.#waitingByClass.uptime + this.#waitingByClass.heavy;
    return waiting + this.#queues.uptime.size + this.#queues.heavy.size;
  }

  get leasesHeld(): number {
    return this.#running.size;
  }

  get lastSuccessfulPollAt(): Date | undefined {
    return this.#lastSuccessfulPollAt;
  }

  get spooled(): number {
    return this.#spool.size;
  }

  /** Results lost for good: dropped for the spool bound plus refused by the service. */
  get droppedResults(): number {
    return this.#spool.droppedTotal + this.#deliverer.rejectedTotal;
  }

  poolState(cls: CheckClass): PoolState {
    const queue = this.#queues[cls];
    const queued = queue.size + this.#waitingByClass[cls];
    return { queued, running: queue.pending, slots: this.#concurrency[cls], free: this.#freeSlots(cls) };
  }

  /** The slots nothing holds: the pool's free-slots metric. */
  #freeSlots(cls: CheckClass): number {
    return Math.max(0, this.#concurrency[cls] - this.#holding(cls));
  }

  /** What the next lease asks for: the free slots, and uptime runs to have in hand (./prefetch.ts). */
  #leaseSlots(cls: CheckClass): number {
    const extra = cls === 'uptime' ? this.#prefetch.extra : 0;
    return Math.max(0, this.#concurrency[cls] + extra - this.#holding(cls));
  }

  /**
   * The slots the class's jobs hold. An uptime job waiting for its due time holds none: the service
   * hands jobs out only a moment ahead (docs/protocol.md "Leasing ahead"), so they are at most that
   * moment's runs, and counting them would cut the runs a slot serves (each a few milliseconds) by
   * that wait. A heavy job keeps its slot while it waits: it runs for seconds, so the wait costs
   * little, and a heavy job taken beyond the slots would wait for a whole run while another agent
   * could start it.
   */
  #holding(cls: CheckClass): number {
    return this.#runningByClass[cls] - (cls === 'uptime' ? this.#waitingByClass.uptime : 0);
  }

  isReady(): boolean {
    return this.registered && !this.#stopping;
  }

  jobLoopLiveness(): { ok: true } | { ok: false; reason: string } {
    if (this.#stopping || this.#waitingForSlot || this.#waitingForSpool || this.#waitingForResults) return { ok: true };
    const maxWaitMs = (this.#registration?.maxWaitSeconds ?? 30) * 1000;
    // The loop legitimately sits in one long-poll for up to maxWait, and backoff can add up to its cap.
    const bound = 2 * maxWaitMs + 30_000 + this.#backoffOptions.capMs;
    const idle = Date.now() - this.#lastLoopProgressAt;
    if (idle > bound) {
      return {
        ok: false,
        reason: `the job loop made no progress for ${Math.round(idle / 1000)} s (bound ${bound / 1000} s)`,
      };
    }
    return { ok: true };
  }

  snapshot(): HealthSnapshot {
    return {
      status: this.#stopping ? 'stopping' : this.registered ? 'ready' : 'starting',
      version: this.version,
      agentId: this.agentId,
      jobsRunning: this.jobsRunning,
      jobsQueued: this.jobsQueued,
      lastSuccessfulPollAt: this.#lastSuccessfulPollAt?.toISOString() ?? null,
      spooled: this.#spool.size,
      droppedResults: this.droppedResults,
      uptimeSeconds: Math.floor((Date.now() - this.#startedAt) / 1000),
    };
  }

  // ---- life cycle ----

  /**
   * Registers (retrying transient failures with backoff), then starts the poll loop, the heartbeat
   * and the deliverer. Resolves once registered, or when start gave up (then see `done`).
   */
  async start(): Promise<void> {
    // Results an earlier process left behind go out first, ahead of anything new.
    this.#deliverer.start();
    const backoff = new Backoff(this.#backoffOptions);
    while (!this.#stopping) {
      this.#lastLoopProgressAt = Date.now();
      try {
        const reg = await this.#client.register({
          agentId: this.agentId,
          version: this.version,
          protocolVersion: PROTOCOL_VERSION,
          hostname: os.hostname(),
          capabilities: { checkTypes: [...this.#runners.keys()], runtimes: this.#runtimes },
          concurrency: { ...this.#concurrency },
        });
        this.#registration = reg;
        // From here results go out in batches when the service takes them (older services: one a call).
        this.#deliverer.useBatches(reg.resultBatchMax);
        break;
      } catch (err) {
        if (this.#stopping) return;
        if (err instanceof UnauthorizedError) {
          this.#fatal(EXIT.unauthorized, unauthorizedMessage(this.#apiUrl));
          return;
        }
        if (err instanceof PermanentError) {
          this.#fatal(EXIT.failure, `the service refused to register this agent: ${err.message}`);
          return;
        }
        if (!(await this.#retryAfter('register', err, backoff))) return;
      }
    }
    const reg = this.#registration;
    if (!reg || this.#stopping) return;

    this.#observability?.init(reg.errorReportingDsn);
    this.#log.info(
      {
        agentId: this.agentId,
        location: reg.location.slugName,
        checkTypes: [...this.#runners.keys()],
        concurrency: this.#concurrency,
        heartbeatSeconds: reg.heartbeatSeconds,
        resultBatchMax: this.#deliverer.batchMax,
      },
      'registered; taking work',
    );
    this.#heartbeatTimer = setInterval(() => void this.#heartbeat(), reg.heartbeatSeconds * 1000);
    this.emit('registered', reg);
    this.#pollLoop = this.#poll();
  }

  /**
   * Graceful stop: readiness goes 503 at once, the long-poll is cut, running jobs get the grace
   * period, the rest are aborted and their leases released so another agent can run them at once
   * rather than after the lease expires. Then one attempt to drain the spool, deregister, flush.
   */
  stop(reason: string): Promise<number> {
    this.#stopPromise ??= this.#shutdown(reason);
    return this.#stopPromise;
  }

  async #shutdown(reason: string): Promise<number> {
    this.#stopping = true;
    this.emit('stopping', reason);
    this.#log.info({ reason, running: this.#running.size, graceSeconds: this.#graceMs / 1000 }, 'stopping');
    this.#stopController.abort();
    await this.#pollLoop;

    if (this.#running.size > 0) {
      const allDone = this.#idle();
      // The grace timer is cancelled once all runs end, so it cannot hold the process open.
      const graceTimer = new AbortController();
      const inGrace = await Promise.race([
        allDone.then(() => true),
        sleep(this.#graceMs, graceTimer.signal).then(() => false),
      ]);
      graceTimer.abort();
      if (!inGrace) {
        const leftovers = [...this.#running.values()];
        const leases = leftovers.map((r) => ({
          runId: r.job.runId,
          leaseId: r.job.leaseId,
          reason: 'agent shutting down',
        }));
        for (const r of leftovers) this.#abortRun(r, 'shutdown');
        this.#log.warn({ runs: leases.map((l) => l.runId) }, 'grace period over; releasing unfinished runs');
        if (leases.length > 0) {
          try {
            await this.#client.release({ agentId: this.agentId, leases });
            this.emit('released', leases);
          } catch (err) {
            this.#log.warn({ err }, 'could not release leases; they expire on their own');
          }
        }
        // Give runners a moment to honour the abort; results of released runs are not submitted.
        const settle = new AbortController();
        await Promise.race([allDone, sleep(Math.min(this.#abandonMs, 5_000), settle.signal)]);
        settle.abort();
      }
    }
    if (this.#heartbeatTimer) clearInterval(this.#heartbeatTimer);

    await this.#deliverer.close();
    await this.#deliverer.drainOnce();

    if (this.#registration && this.#exitCode !== EXIT.unauthorized) {
      try {
        await this.#client.deregister({ agentId: this.agentId });
      } catch (err) {
        this.#log.warn({ err }, 'could not deregister; the service forgets this agent when its leases lapse');
      }
    }
    this.#log.info({ exitCode: this.#exitCode, spooled: this.#spool.size }, 'stopped');
    await this.#observability?.flush(2_000);
    await flushLogger(this.#log);
    this.emit('stopped', this.#exitCode);
    this.#resolveDone(this.#exitCode);
    return this.#exitCode;
  }

  /** Logs a clear one-line reason and stops at once (no grace: the service will not take our work). */
  #fatal(code: number, message: string): void {
    if (this.#exitCode === EXIT.ok) this.#exitCode = code;
    this.#log.fatal(message);
    if (code === EXIT.unauthorized) {
      // Nothing can be uploaded or released with a refused key: do not wait out the grace period.
      for (const r of this.#running.values()) this.#abortRun(r, 'shutdown');
    }
    void this.stop(code === EXIT.unauthorized ? 'API key rejected' : 'fatal error');
  }

  /** Resolves when no run is left (each finished run emits 'slot-freed'). */
  async #idle(): Promise<void> {
    while (this.#running.size > 0) await once(this, 'slot-freed');
  }

  // ---- poll loop ----

  async #poll(): Promise<void> {
    const backoff = new Backoff(this.#backoffOptions);
    const signal = this.#stopController.signal;
    const maxWait = this.#registration?.maxWaitSeconds ?? 25;
    while (!this.#stopping) {
      await this.#awaitSpoolDrained(maxWait * 1000);
      await this.#awaitResultBacklog();
      if (this.#stopping) break;
      this.#lastLoopProgressAt = Date.now();
      const slots: Record<CheckClass, number> = {
        uptime: this.#leaseSlots('uptime'),
        heavy: this.#leaseSlots('heavy'),
      };
      if (slots.uptime === 0 && slots.heavy === 0) {
        // Every slot is busy: leasing now could only return nothing. Wait for a run to end (an event,
        // not a timer) or for stop.
        this.#waitingForSlot = true;
        try {
          await once(this, 'slot-freed', { signal });
        } catch {
          // Aborted by stop.
        } finally {
          this.#waitingForSlot = false;
        }
        continue;
      }
      // A lease asking 0 slots of a class is re-issued when a slot of that class frees (see #enqueue):
      // otherwise with JOB_CONCURRENCY=1 the next heavy job would wait out the whole long-poll.
      const refresh = new AbortController();
      this.#currentPoll = { slots, refresh };
      try {
        const res = await this.#client.lease(
          { agentId: this.agentId, slots, waitSeconds: maxWait },
          AbortSignal.any([signal, refresh.signal]),
        );
        this.#lastSuccessfulPollAt = new Date();
        backoff.reset();
        if (this.#stopping) {
          // Jobs leased in the instant of stopping: give them straight back.
          await this.#releaseUnstarted(res.jobs);
          break;
        }
        if (res.jobs.length > 0) {
          this.emit('leased', res.jobs);
          for (const job of res.jobs) this.#enqueue(job);
        }
      } catch (err) {
        if (this.#stopping) break;
        if (refresh.signal.aborted) continue;
        if (err instanceof UnauthorizedError) {
          this.#fatal(EXIT.unauthorized, unauthorizedMessage(this.#apiUrl));
          break;
        }
        if (!(await this.#retryAfter('lease', err, backoff))) break;
      } finally {
        this.#currentPoll = undefined;
      }
    }
  }

  /**
   * Logs a failed register or lease and waits out the backoff its cause calls for (a short cap when
   * the service could not be reached). Resolves false when stop cut the wait.
   */
  async #retryAfter(call: 'register' | 'lease', err: unknown, backoff: Backoff): Promise<boolean> {
    const hint = retryHintOf(err);
    const delay = backoff.next(hint);
    const level = err instanceof PermanentError ? 'error' : 'warn';
    const message =
      call === 'register' ? 'could not register with the service; retrying' : 'lease request failed; retrying';
    this.#log[level]({ err, retryInMs: delay, unreachable: hint.unreachable }, message);
    this.emit('retrying', { call, delayMs: delay, unreachable: hint.unreachable });
    return sleep(delay, this.#stopController.signal);
  }

  /**
   * Results spooled while the service was away go out before new work is taken, so the service gets
   * them first and in order. Bounded by `boundMs`: a result the service keeps refusing (a 5xx for that
   * one alone) must slow leasing down, not stop it.
   */
  async #awaitSpoolDrained(boundMs: number): Promise<void> {
    if (this.#spool.size === 0) return;
    this.#waitingForSpool = true;
    try {
      await once(this.#spool, 'empty', {
        signal: AbortSignal.any([this.#stopController.signal, AbortSignal.timeout(boundMs)]),
      });
    } catch {
      // Stopped, or the bound passed: lease anyway.
    } finally {
      this.#waitingForSpool = false;
    }
  }

  /**
   * Backpressure (docs/protocol.md "Overload"): a result waiting in memory for its upload holds its
   * run's lease, which is no longer heartbeated once the check ended. Leasing faster than the service
   * stores results would grow that backlog until leases expire and runs are run twice; waiting here
   * leaves the excess in the service's queue, where it is shed with a reason.
   */
  async #awaitResultBacklog(): Promise<void> {
    const bound = this.#concurrency.uptime + this.#concurrency.heavy;
    if (this.#deliverer.backlog < bound) return;
    this.#waitingForResults = true;
    this.emit('waiting-for-results', { pending: this.#deliverer.pending });
    const done = new AbortController();
    const signal = AbortSignal.any([this.#stopController.signal, done.signal]);
    try {
      while (!this.#stopping && this.#deliverer.backlog >= bound) {
        // Each of these takes a result off the in-memory list.
        await Promise.race(
          ['result-delivered', 'result-spooled', 'result-rejected'].map((e) => once(this, e, { signal })),
        );
      }
    } catch {
      // Stopped.
    } finally {
      done.abort();
      this.#waitingForResults = false;
    }
  }

  async #releaseUnstarted(jobs: Job[]): Promise<void> {
    if (jobs.length === 0) return;
    const leases = jobs.map((j) => ({ runId: j.runId, leaseId: j.leaseId, reason: 'agent shutting down' }));
    try {
      await this.#client.release({ agentId: this.agentId, leases });
      this.emit('released', leases);
    } catch (err) {
      this.#log.warn({ err }, 'could not release leases; they expire on their own');
    }
  }

  #enqueue(job: Job): void {
    // Trust the type over the job's class field for pool choice only if the service left it out.
    const cls: CheckClass = job.checkClass ?? checkClassOf(job.check.checkType);
    const entry: RunningJob = { job, controller: new AbortController(), reason: undefined, started: false };
    this.#running.set(job.runId, entry);
    this.#runningByClass[cls] += 1;
    const waitMs = startDelayOf(job);
    if (waitMs === 0) {
      this.#schedule(entry, cls);
      return;
    }
    // Handed out ahead of its due time: it starts then, not now. A cancel or stop meanwhile aborts
    // the entry, and #run, reached at the due time, reports it as it does a job that waited for a slot.
    this.#waitingByClass[cls] += 1;
    setTimeout(() => {
      this.#waitingByClass[cls] -= 1;
      this.#schedule(entry, cls);
    }, waitMs);
  }

  /** Puts a leased job in its class's pool; the slot bookkeeping ends with it. */
  #schedule(entry: RunningJob, cls: CheckClass): void {
    const { job } = entry;
    this.#queues[cls]
      .add(() => this.#timed(entry, cls))
      .catch((err: unknown) => {
        this.#log.error({ err, runId: job.runId }, 'a run failed outside its runner');
      })
      .finally(() => {
        this.#running.delete(job.runId);
        this.#runningByClass[cls] -= 1;
        // The long-poll in flight asked for none of this class: re-ask with the freed slot. (If the
        // service was answering at that instant, jobs in the cut response come back after their
        // lease expires; the window is one response write, against up to maxWait of idle slot.)
        if (this.#currentPoll && this.#currentPoll.slots[cls] === 0) this.#currentPoll.refresh.abort();
        this.emit('slot-freed');
      });
  }

  /** Runs the job; an uptime run's wall time sizes the prefetch. */
  async #timed(entry: RunningJob, cls: CheckClass): Promise<void> {
    const startedAt = performance.now();
    await this.#run(entry);
    if (cls === 'uptime') this.#prefetch.ran(performance.now() - startedAt);
  }

  #abortRun(entry: RunningJob, reason: AbortReason): void {
    if (entry.controller.signal.aborted) return;
    entry.reason = reason;
    // A TimeoutError for the time limit and an AbortError otherwise, as AbortSignal.timeout() and
    // abort() do, so runners can tell "too slow" from "stop" by the reason's name.
    entry.controller.abort(
      reason === 'timeout'
        ? new DOMException(`the run reached its limit of ${entry.job.timeoutMs} ms`, 'TimeoutError')
        : new DOMException(`run ${reason}`, 'AbortError'),
    );
  }

  async #run(entry: RunningJob): Promise<void> {
    const { job } = entry;
    const log = jobLogger(this.#log, job);
    if (entry.controller.signal.aborted) {
      // Cancelled or lost while it waited for a slot: nothing ran, so say so when cancelled.
      if (entry.reason === 'cancelled') this.#submit(entry, this.#notRun(job, 'cancelled before it started'));
      return;
    }
    entry.started = true;
    // This job's secrets (src/agent/scrub/): scrubbed from its result, and from the agent's logs and
    // error reports while it runs and a grace period after.
    const scrubber = scrubberForCheck(job.check);
    const releaseSecrets = registerActiveScrubber(scrubber);
    const runArtifacts = this.#artifacts?.forRun(job.runId, scrubber);
    const startedAt = new Date();
    this.emit('job-started', job);
    log.debug({ leaseAttempt: job.leaseAttempt }, 'run started');
    const timer = setTimeout(() => this.#abortRun(entry, 'timeout'), job.timeoutMs);

    let outcome: CheckOutcome;
    const runner = this.#runners.get(job.check.checkType);
    if (!runner) {
      outcome = this.#failure(
        startedAt,
        `this agent has no runner for ${job.check.checkType} checks; it runs ${[...this.#runners.keys()].join(', ') || 'none'}`,
      );
    } else {
      try {
        // `{{VARIABLE}}` references resolved here, once per run (src/agent/checks/variables/).
        const prepared = substituteVariables(job.check, {
          runId: job.runId,
          region: this.#registration?.location.slugName,
        });
        const running = runner.run(prepared.check, {
          signal: entry.controller.signal,
          timeoutMs: job.timeoutMs,
          log,
          useOsDnsResolver: this.#useOsDnsResolver,
          sandboxes: this.#sandboxes,
          onSecret: (value) => scrubber.add(value),
          ...(runArtifacts ? { artifacts: runArtifacts } : {}),
        });
        outcome = withVariableNotes(await Promise.race([running, this.#abandoned(entry, startedAt)]), prepared.notes);
      } catch (err) {
        log.error({ err }, 'the check runner threw: agent error');
        outcome = this.#failure(startedAt, `agent error: ${(err as Error)?.message ?? String(err)}`);
      }
    }
    clearTimeout(timer);

    if (entry.reason === 'lost' || entry.reason === 'shutdown') {
      // Lost: the run is no longer ours, a result would be a duplicate. Shutdown: the lease was
      // released, another agent runs it again.
      log.info({ reason: entry.reason }, 'run stopped without a result');
      this.emit('job-finished', job, undefined);
      releaseSecrets();
      return;
    }
    // The run's artifacts are referenced from its result (they upload on their own, after it).
    const artifactDetails = runArtifacts?.details() ?? {};
    if (Object.keys(artifactDetails).length > 0)
      outcome = { ...outcome, details: { ...outcome.details, ...artifactDetails } };
    // Every string of the result, secrets scrubbed and sensitive headers redacted, before it leaves.
    const result = scrubber.scrubDeep(this.#result(job, startedAt, outcome, entry.reason));
    // A line per passing run would be most of an INFO log on a busy agent (and a write each): they
    // are DEBUG; a failing run is worth a line at INFO.
    const level = result.hasFailures || result.hasErrors ? 'info' : 'debug';
    log[level](
      {
        hasFailures: result.hasFailures,
        hasErrors: result.hasErrors,
        isCancelled: result.isCancelled,
        responseTime: result.responseTime,
      },
      'run finished',
    );
    this.emit('job-finished', job, result);
    this.#submit(entry, result);
    releaseSecrets();
  }

  /** Settles with an agent-made outcome if the runner ignores its abort for too long. */
  #abandoned(entry: RunningJob, startedAt: Date): Promise<CheckOutcome> {
    return new Promise((resolve) => {
      const signal = entry.controller.signal;
      const onAbort = () => {
        const t = setTimeout(() => {
          resolve(
            this.#failure(
              startedAt,
              `the run did not stop within ${this.#abandonMs} ms of being aborted (${entry.reason})`,
            ),
          );
        }, this.#abandonMs);
        t.unref();
      };
      if (signal.aborted) onAbort();
      else signal.addEventListener('abort', onAbort, { once: true });
    });
  }

  /** The daemon's own outcomes count the time spent and fail the run. */
  #failure(startedAt: Date, error: string, hasErrors = true): CheckOutcome {
    return agentErrorOutcome(startedAt, error, { responseTime: 'elapsed', hasFailures: true, hasErrors });
  }

  #notRun(job: Job, error: string): RunResult {
    const outcome = this.#failure(new Date(), error, false);
    return this.#result(job, new Date(outcome.startedAt), outcome, 'cancelled');
  }

  #result(job: Job, startedAt: Date, outcome: CheckOutcome, reason: AbortReason | undefined): RunResult {
    let error = outcome.error;
    let hasFailures = outcome.hasFailures;
    if (reason === 'timeout') {
      hasFailures = true;
      error ??= `the run took longer than its limit of ${job.timeoutMs} ms`;
    } else if (reason === 'cancelled') {
      error ??= 'cancelled by the service';
    }
    const dueAt = Date.parse(job.dueAt);
    return {
      runId: job.runId,
      checkId: job.check.id,
      checkType: job.check.checkType,
      startedAt: outcome.startedAt,
      stoppedAt: outcome.stoppedAt,
      responseTime: outcome.responseTime,
      hasFailures,
      hasErrors: outcome.hasErrors,
      isDegraded: outcome.isDegraded,
      overMaxResponseTime: outcome.overMaxResponseTime,
      isCancelled: reason === 'cancelled',
      error,
      apiCheckResult: outcome.apiCheckResult,
      ...(outcome.details ? { details: outcome.details } : {}),
      agent: { id: this.agentId, version: this.version },
      scheduleLagMs: Number.isFinite(dueAt) ? Math.max(0, startedAt.getTime() - dueAt) : 0,
    };
  }

  #submit(entry: RunningJob, result: RunResult): void {
    this.#deliverer.deliver({ agentId: this.agentId, leaseId: entry.job.leaseId, result });
  }

  // ---- heartbeat ----

  async #heartbeat(): Promise<void> {
    if (this.#heartbeatInFlight || this.#running.size === 0) return;
    this.#heartbeatInFlight = true;
    try {
      const leases = [...this.#running.values()].map((r) => ({ runId: r.job.runId, leaseId: r.job.leaseId }));
      const res = await this.#client.heartbeat({ agentId: this.agentId, leases });
      for (const lease of res.leases) {
        const entry = this.#running.get(lease.runId);
        if (!entry || entry.job.leaseId !== lease.leaseId) continue;
        if (lease.state === 'cancelled' || lease.state === 'lost') {
          jobLogger(this.#log, entry.job).info({ state: lease.state }, 'the service ended this run');
          this.#abortRun(entry, lease.state);
        }
      }
    } catch (err) {
      if (err instanceof UnauthorizedError) {
        this.#fatal(EXIT.unauthorized, unauthorizedMessage(this.#apiUrl));
      } else {
        // The next tick retries; a lease lives several heartbeats, so one miss costs nothing.
        this.#log.warn({ err }, 'heartbeat failed');
      }
    } finally {
      this.#heartbeatInFlight = false;
    }
  }
}
