/**
 * The one interface every check type implements (one file per type beside this one), in the manner
 * of blackbox_exporter's prober functions: a check definition and a context in, an outcome out.
 *
 * A runner never throws for anything the check's target did (refused connection, bad TLS, failed
 * assertion): those are failed outcomes with a reason. A throw means the agent itself broke, and the
 * daemon reports it as an agent error.
 */
import type { CheckDefinition, CheckType } from '../../shared/checks/types.ts';
import type { Log } from '../../shared/log.ts';
import type { RunResult } from '../../shared/protocol.ts';
import type { RunArtifacts } from '../artifacts/uploader.ts';
import type { SandboxPool } from '../sandbox/pool.ts';

export interface CheckContext {
  /** Aborted when the run is cancelled, times out or the agent shuts down; stop promptly. */
  signal: AbortSignal;
  /** Wall-clock limit of the run in milliseconds (the signal fires when it passes). */
  timeoutMs: number;
  /** A child logger carrying the run's ids. */
  log: Log;
  /** Resolve check hostnames through getaddrinfo instead of the agent's own DNS client. */
  useOsDnsResolver: boolean;
  /** Sandboxes for user code (src/agent/sandbox/); absent, checks with scripts report an error. */
  sandboxes?: SandboxPool;
  /** Told each secret value a script created at run time (process.env.OUTPOST_SECRET_*), for scrubbing. */
  onSecret?: (value: string) => void;
  /**
   * Files the run produced (screenshots, videos, traces, reports): `artifacts.add({name, kind, path,
   * contentType})` queues each for upload after the run (text ones scrubbed, over-cap ones left out
   * with a note) and the daemon puts the references into the result. Absent without an uploader.
   */
  artifacts?: RunArtifacts;
}

/** What a runner measures; the daemon adds ids, cancellation and agent details to make a RunResult. */
export type CheckOutcome = Pick<
  RunResult,
  | 'startedAt'
  | 'stoppedAt'
  | 'responseTime'
  | 'hasFailures'
  | 'hasErrors'
  | 'isDegraded'
  | 'overMaxResponseTime'
  | 'error'
  | 'apiCheckResult'
  | 'details'
>;

export interface CheckRunner<C extends CheckDefinition = CheckDefinition> {
  readonly checkType: CheckType;
  run(check: C, ctx: CheckContext): Promise<CheckOutcome>;
}
