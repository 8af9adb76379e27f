/**
 * The agent's Prometheus metrics, served as GET /metrics on the health port (./health.ts) and listed
 * in README ("The agent's health port and metrics").
 *
 * One registry per agent, never prom-client's global one: tests and several agents in one process
 * keep their figures apart. Gauges read the live state when scraped (collect callbacks); counters
 * count the daemon's and the uploader's events, or follow a running total kept where the thing
 * happens (the spool's drops), so no component calls prom-client itself. Labels take values from
 * fixed sets only (check class, check type, verdict, delivery status, sandbox state, the runtimes the
 * agent carries): never a check id, name or URL, so the number of series stays bounded.
 */
import { Counter, collectDefaultMetrics, Gauge, Histogram, Registry } from 'prom-client';
import { CHECK_TYPES, type CheckClass } from '../shared/checks/types.ts';
import type { RunResult } from '../shared/protocol.ts';
import type { ArtifactUploader } from './artifacts/uploader.ts';
import type { AgentDaemon, PoolState } from './daemon.ts';
import type { SandboxPool } from './sandbox/pool.ts';
import type { ResultSpool } from './spool.ts';

const CHECK_CLASSES: readonly CheckClass[] = ['uptime', 'heavy'];

/** The `verdict` label of a check's duration. */
export const VERDICTS = ['passed', 'degraded', 'failed', 'error', 'cancelled'] as const;
export type Verdict = (typeof VERDICTS)[number];

/** Cancelled runs apart; otherwise the worst of the result wins: an error over a failure over degraded. */
export function verdictOf(r: Pick<RunResult, 'isCancelled' | 'hasErrors' | 'hasFailures' | 'isDegraded'>): Verdict {
  if (r.isCancelled) return 'cancelled';
  if (r.hasErrors) return 'error';
  if (r.hasFailures) return 'failed';
  return r.isDegraded ? 'degraded' : 'passed';
}

/** Seconds: from a TCP connect on loopback to a Playwright suite of several minutes. */
const DURATION_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 600];

/** What the metrics read; main passes all of them, a test only what it looks at. */
export interface AgentMetricsSources {
  daemon?: Pick<AgentDaemon, 'on' | 'poolState' | 'lastSuccessfulPollAt'>;
  spool?: Pick<ResultSpool, 'size' | 'bytes' | 'droppedTotal'>;
  sandboxes?: Pick<SandboxPool, 'counts'>;
  artifacts?: Pick<ArtifactUploader, 'on' | 'droppedTotal' | 'queue'>;
}

/** What GET /metrics serves. */
export interface AgentMetrics {
  readonly registry: Registry;
  readonly contentType: string;
  text(): Promise<string>;
}

/** A registry of the agent's metrics and prom-client's process metrics, hooked to `sources`. */
export function createAgentMetrics(sources: AgentMetricsSources): AgentMetrics {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry });
  if (sources.daemon) {
    poolMetrics(registry, sources.daemon);
    resultMetrics(registry, sources.daemon);
    checkDurations(registry, sources.daemon);
  }
  if (sources.spool) spoolMetrics(registry, sources.spool);
  if (sources.artifacts) artifactMetrics(registry, sources.artifacts);
  if (sources.sandboxes) sandboxMetrics(registry, sources.sandboxes);
  return { registry, contentType: registry.contentType, text: () => registry.metrics() };
}

function poolMetrics(registry: Registry, daemon: Pick<AgentDaemon, 'poolState' | 'lastSuccessfulPollAt'>): void {
  const perClass = (name: string, help: string, read: (state: PoolState) => number) =>
    new Gauge({
      name,
      help,
      labelNames: ['check_class'],
      registers: [registry],
      collect() {
        for (const check_class of CHECK_CLASSES) this.set({ check_class }, read(daemon.poolState(check_class)));
      },
    });
  perClass('outpost_agent_jobs_queued', 'Jobs leased and waiting for a slot in their pool.', (s) => s.queued);
  perClass('outpost_agent_jobs_running', 'Jobs running.', (s) => s.running);
  perClass('outpost_agent_slots', 'Concurrency of the pool (UPTIME_CONCURRENCY, JOB_CONCURRENCY).', (s) => s.slots);
  perClass(
    'outpost_agent_free_slots',
    'Slots not taken by a leased, unfinished job. A lease asks for these, plus uptime runs to hold beyond the slots when runs are short.',
    (s) => s.free,
  );
  // 0 until the first lease answers; alert on time() minus this, as for any *_timestamp_seconds.
  liveGauge(
    registry,
    'outpost_agent_last_successful_poll_timestamp_seconds',
    'When the service last answered a lease request (Unix time; 0 before the first answer).',
    () => (daemon.lastSuccessfulPollAt?.getTime() ?? 0) / 1000,
  );
}

function resultMetrics(registry: Registry, daemon: Pick<AgentDaemon, 'on'>): void {
  const sent = new Counter({
    name: 'outpost_agent_results_sent_total',
    help: 'Results the service took (status: stored, or duplicate of one it already had).',
    labelNames: ['status'],
    registers: [registry],
  });
  for (const status of ['stored', 'duplicate']) sent.inc({ status }, 0);
  const spooled = counter(
    registry,
    'outpost_agent_results_spooled_total',
    'Results written to the spool because the service could not take them yet.',
  );
  const rejected = counter(
    registry,
    'outpost_agent_results_rejected_total',
    'Results the service refused for good (a 4xx other than 401); they are dropped.',
  );
  daemon.on('result-delivered', ({ status }) => sent.inc({ status }));
  daemon.on('result-spooled', () => spooled.inc());
  daemon.on('result-rejected', () => rejected.inc());
}

function checkDurations(registry: Registry, daemon: Pick<AgentDaemon, 'on'>): void {
  const histogram = new Histogram({
    name: 'outpost_agent_check_duration_seconds',
    help: 'How long runs took, from the start of the check to its result, by check type and verdict.',
    labelNames: ['check_type', 'verdict'],
    buckets: DURATION_BUCKETS,
    registers: [registry],
  });
  daemon.on('job-finished', (_job, result) => {
    // No result: the run was lost or handed back at shutdown, and another run stands for it.
    if (!result) return;
    const seconds = (Date.parse(result.stoppedAt) - Date.parse(result.startedAt)) / 1000;
    if (!Number.isFinite(seconds)) return;
    // The type comes from the service; a value outside the known list must not become a new series.
    const check_type = (CHECK_TYPES as readonly string[]).includes(result.checkType) ? result.checkType : 'unknown';
    histogram.observe({ check_type, verdict: verdictOf(result) }, Math.max(0, seconds));
  });
}

function spoolMetrics(registry: Registry, spool: Pick<ResultSpool, 'size' | 'bytes' | 'droppedTotal'>): void {
  liveGauge(registry, 'outpost_agent_spool_results', 'Results waiting in the spool.', () => spool.size);
  liveGauge(
    registry,
    'outpost_agent_spool_bytes',
    'Bytes of the results waiting in the spool (bounded by SPOOL_MAX_BYTES).',
    () => spool.bytes,
  );
  followingCounter(
    registry,
    'outpost_agent_results_dropped_total',
    'Results lost from the spool: the oldest dropped to stay within SPOOL_MAX_BYTES, or files found unreadable.',
    () => spool.droppedTotal,
  );
}

function artifactMetrics(registry: Registry, artifacts: Pick<ArtifactUploader, 'on' | 'droppedTotal' | 'queue'>): void {
  const failures = counter(
    registry,
    'outpost_agent_artifact_upload_failures_total',
    'Artifact upload attempts that failed (each retry counts).',
  );
  const uploaded = counter(registry, 'outpost_agent_artifacts_uploaded_total', 'Artifacts uploaded completely.');
  artifacts.on('attempt-failed', () => failures.inc());
  artifacts.on('uploaded', () => uploaded.inc());
  followingCounter(
    registry,
    'outpost_agent_artifacts_dropped_total',
    'Artifacts lost: dropped to stay within ARTIFACT_QUEUE_MAX_BYTES, unreadable, or refused by the service.',
    () => artifacts.droppedTotal,
  );
  liveGauge(registry, 'outpost_agent_artifacts_queued', 'Artifacts waiting for upload.', () => artifacts.queue.size);
  liveGauge(
    registry,
    'outpost_agent_artifact_queue_bytes',
    'Bytes of the artifacts waiting for upload.',
    () => artifacts.queue.bytes,
  );
}

function sandboxMetrics(registry: Registry, pool: Pick<SandboxPool, 'counts'>): void {
  new Gauge({
    name: 'outpost_agent_sandboxes',
    help: 'Sandboxes for user code by runtime and state: idle (warm, waiting), busy (running a job), starting (for the pool).',
    labelNames: ['runtime', 'state'],
    registers: [registry],
    collect() {
      for (const { runtime, idle, busy, starting } of pool.counts()) {
        this.set({ runtime, state: 'idle' }, idle);
        this.set({ runtime, state: 'busy' }, busy);
        this.set({ runtime, state: 'starting' }, starting);
      }
    },
  });
}

function counter(registry: Registry, name: string, help: string): Counter {
  return new Counter({ name, help, registers: [registry] });
}

function liveGauge(registry: Registry, name: string, help: string, read: () => number): void {
  new Gauge({
    name,
    help,
    registers: [registry],
    collect() {
      this.set(read());
    },
  });
}

/** A counter that follows a running total kept elsewhere (which only grows): it adds what is new at each scrape. */
function followingCounter(registry: Registry, name: string, help: string, total: () => number): void {
  let seen = 0;
  new Counter({
    name,
    help,
    registers: [registry],
    collect() {
      const now = total();
      if (now > seen) this.inc(now - seen);
      seen = Math.max(seen, now);
    },
  });
}
