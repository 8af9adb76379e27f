/** Shapes shared by the sandbox modules (docs/sandbox.md explains the limits and failure classes). */

export interface SandboxLimits {
  /** V8 heap cap of the sandbox's Node (`--max-old-space-size`), in MB. */
  heapMb: number;
  /** Resident memory of the whole sandbox process tree, in MB; the watchdog kills past it. */
  rssMb: number;
  /** How often the watchdog reads /proc, in ms. */
  watchdogIntervalMs: number;
  /** stdout and stderr kept for the check's log, together, in bytes; the rest is counted and dropped. */
  outputBytes: number;
  /** One log line at most this long (longer ones are cut with a note). */
  lineBytes: number;
  /** How long a sandbox may take to start and say it is ready before it counts as broken. */
  startTimeoutMs: number;
}

export const DEFAULT_SANDBOX_LIMITS: SandboxLimits = {
  heapMb: 384,
  rssMb: 512,
  watchdogIntervalMs: 100,
  outputBytes: 256 * 1024,
  lineBytes: 8 * 1024,
  startTimeoutMs: 15_000,
};

/** One line a script printed: which stream, when the agent read it (ISO), and the text. */
export interface LogLine {
  time: string;
  stream: 'stdout' | 'stderr';
  msg: string;
}

/** Where a script failed, as the sandbox's bootstrap describes a thrown value. */
export interface ScriptErrorInfo {
  name: string;
  message: string;
  line: number | null;
  column: number | null;
  stack: string | null;
}

/** One step of a job: a user script run with a context object it may change. */
export interface SandboxStep {
  stage: 'setup' | 'teardown';
  /** Shown in stack traces and error messages (setup.js, teardown.js). */
  filename: string;
  code: string;
  /** Put into process.env before the script runs. */
  env: Record<string, string>;
  context: Record<string, unknown>;
  /** Set by SandboxProcess: written to stdout and stderr after the step, so the agent knows its output is complete. */
  marker?: string;
}

/**
 * How a step ended (`secrets`: values found in process.env.OUTPOST_SECRET_* after the step). `ok` and the user-fault kinds come from the script; `aborted` means the run
 * was cancelled or timed out from outside (the daemon's signal).
 */
export type StepOutcome =
  | { kind: 'ok'; context: Record<string, unknown>; secrets: string[] }
  | { kind: 'script-error'; error: ScriptErrorInfo }
  | { kind: 'timeout'; limitMs: number }
  | { kind: 'memory'; detail: string }
  | { kind: 'exited'; code: number | null; signal: string | null }
  | { kind: 'protocol'; detail: string }
  | { kind: 'aborted'; reason: unknown };
