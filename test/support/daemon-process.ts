/**
 * The Debian daemons tests start in the foreground (nginx, dnsmasq): finding the installed binary,
 * failing loudly when it is missing (CI installs them, .ci/run; a test must not pass without one),
 * and stopping the process.
 */
import { type ChildProcess, execFileSync } from 'node:child_process';

/** The first of `candidates` that runs with `versionArgs`; `missing` is the error's message otherwise. */
export function installedBinary(
  candidates: readonly string[],
  versionArgs: readonly string[],
  missing: string,
): string {
  for (const candidate of candidates) {
    try {
      execFileSync(candidate, versionArgs, { stdio: 'ignore' });
      return candidate;
    } catch {}
  }
  throw new Error(missing);
}

/** Sends `signal` to `child` unless it has already ended, and resolves once it has exited. */
export async function stopChild(child: ChildProcess, signal: NodeJS.Signals = 'SIGTERM'): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const done = new Promise((r) => child.once('exit', r));
  child.kill(signal);
  await done;
}
