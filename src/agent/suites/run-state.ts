/** What one suite run (./run-suite.ts) carries from phase to phase, and how a phase says it failed. */
import type { PlaywrightCheckDefinition, PlaywrightCheckResult } from '../../shared/checks/types.ts';
import type { Log } from '../../shared/log.ts';
import type { SandboxIsolation } from '../sandbox/isolation.ts';
import type { SandboxMarks } from '../sandbox/procfs.ts';
import type { ArtifactCollector, CollectedArtifacts } from './artifacts.ts';
import type { BundleSource } from './bundle-source.ts';
import type { SuiteRunnerConfig } from './config.ts';
import type { ResolvedEngine } from './engines.ts';
import type { SuiteLog } from './log.ts';
import type { ParsedReport } from './report.ts';
import type { SuiteUid } from './suite-uid.ts';

export interface SuiteRunContext {
  config: SuiteRunnerConfig;
  bundles: BundleSource;
  signal: AbortSignal;
  log: Log;
  artifacts?: ArtifactCollector;
  /** The agent's environment for LANG and TZ only (tests pass their own). */
  agentEnv?: NodeJS.ProcessEnv;
  /** A uid of its own for the run's install and tests (../sandbox/isolation.ts), or none: the agent's user. */
  isolation?: SandboxIsolation;
}

/** The job folder's parts: the sandbox's (project, out, home, tmp) and the agent's own corner. */
export interface JobFolders {
  root: string;
  dirs: { project: string; out: string; home: string; tmp: string };
  /** Where the agent writes (the zipped HTML report): the sandbox cannot write there. */
  agentDir: string;
}

/** One run's state: fixed at its start, then filled in by each phase for the verdict. */
export interface SuiteRun {
  readonly check: PlaywrightCheckDefinition;
  readonly ctx: SuiteRunContext;
  readonly started: Date;
  /** When the global timeout ends the run, in epoch milliseconds. */
  readonly deadline: number;
  /** The user's log of the run (its jobLog), not the agent's. */
  readonly log: SuiteLog;
  /** The value of SUITE_MARKER_VAR in every process of the run. */
  readonly marker: string;
  readonly timings: { unpackMs: number; installMs: number; testMs: number };
  readonly isolation: SandboxIsolation;
  readonly job: JobFolders;
  readonly marks: SandboxMarks;
  who?: SuiteUid;
  engine?: ResolvedEngine;
  packageManager: string | null;
  cacheState: PlaywrightCheckResult['dependencyCache'];
  report?: ParsedReport;
  globalTimeoutReached: boolean;
  setup?: SetupFailure;
  testExit: number | null;
  collected: CollectedArtifacts;
}

/** A failure before any test ran; `agentFault` marks the agent's own (engine missing, download failed). */
export class SetupFailure extends Error {
  readonly phase: string;
  readonly agentFault: boolean;
  constructor(phase: string, message: string, agentFault = false) {
    super(message);
    this.phase = phase;
    this.agentFault = agentFault;
  }
}

/** Why the run stopped before it could finish on its own. */
export type Stop = 'cancelled' | 'timed-out' | undefined;

export function stopReason(run: SuiteRun): Stop {
  if (!run.ctx.signal.aborted) return undefined;
  const reason = run.ctx.signal.reason as { name?: string } | undefined;
  return reason?.name === 'TimeoutError' ? 'timed-out' : 'cancelled';
}

/** "the global timeout of N s was reached", the start of every message about it. */
export function globalTimeoutReachedText(check: PlaywrightCheckDefinition): string {
  return `the global timeout of ${Math.round(check.globalTimeoutMs / 1000)} s was reached`;
}
