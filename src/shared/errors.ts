/**
 * Errors typed by cause. Each class says *why* something failed so that callers
 * decide on behaviour (exit code, HTTP status, retry) from the type, not from text.
 */

/** A bad flag or environment value. The CLI prints `message` as one line and exits 2. */
export class ConfigError extends Error {
  override readonly name = 'ConfigError';
  /** The flag or variable at fault, e.g. `JOB_CONCURRENCY` or `--name`. */
  readonly setting: string;
  constructor(setting: string, message: string) {
    super(message);
    this.setting = setting;
  }
}

/** Exit codes shared by both programs, documented in README. */
export const EXIT = {
  ok: 0,
  failure: 1,
  config: 2,
  /** The service rejected the agent's key (revoked or wrong). */
  unauthorized: 3,
} as const;
