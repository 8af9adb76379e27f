/**
 * Sandbox errors typed by whose fault they are. A SandboxStartError is the agent's (the runtime
 * binary is missing or broken, spawning failed, the sandbox never said it was ready): the job is
 * retried once on a fresh sandbox and then reported as an agent error, never as a failed check.
 * Everything the user's code does once it runs is a StepOutcome instead (./types.ts).
 */

export class SandboxStartError extends Error {
  override readonly name = 'SandboxStartError';
  readonly runtimeId: string;
  constructor(runtimeId: string, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.runtimeId = runtimeId;
  }
}

/** The job asks for a runtime this agent does not carry (the message names the ones it does). */
export class RuntimeUnavailableError extends Error {
  override readonly name = 'RuntimeUnavailableError';
  readonly runtimeId: string;
  readonly carried: readonly string[];
  constructor(runtimeId: string, carried: readonly string[]) {
    super(
      `runtime ${runtimeId} is not available on this agent; it carries ${carried.length > 0 ? carried.join(', ') : 'no runtimes (run npm run runtimes:install and check RUNTIMES_DIR)'}`,
    );
    this.runtimeId = runtimeId;
    this.carried = carried;
  }
}
