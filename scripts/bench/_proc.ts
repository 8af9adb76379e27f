/**
 * Child processes for the benchmarks' peers (blackbox_exporter, nginx, Alertmanager): a free loopback
 * port, spawning a Debian tool (_tools.ts finds it or names its package), waiting for it to listen,
 * stopping it, and making sure it and its temp dir do not outlive this process.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { rmSync } from 'node:fs';
import { stopChild } from '../../test/support/daemon-process.ts';
import { acceptsConnection, freePort } from '../../test/support/loopback-port.ts';
import { findTool, type Tool } from './_tools.ts';

// The tests' own helpers: the peers here start and stop as the tests' daemons do.
export { freePort, stopChild };

/** Spawns a Debian tool (a ConfigError naming its package when it is missing). Its stderr goes to ours. */
export async function spawnTool(tool: Tool, args: string[]): Promise<ChildProcess> {
  const child = spawn(findTool(tool), args, { stdio: ['ignore', 'ignore', 'inherit'] });
  await new Promise<void>((resolve, reject) => {
    child.once('spawn', resolve);
    child.once('error', reject);
  });
  return child;
}

export async function waitForPort(port: number, child: ChildProcess, what: string): Promise<void> {
  const deadline = Date.now() + 10_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`${what} exited (${child.exitCode}) before it listened`);
    if (await acceptsConnection(port)) return;
    if (Date.now() > deadline) throw new Error(`${what} did not listen on ${port}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

/**
 * Kills `child` and removes `dir` if this process exits (or is interrupted) before `release` is
 * called: a benchmark that fails or is stopped half-way must not leave a peer running.
 * Returns `release`, to call once the child has been stopped the ordinary way.
 */
export function cleanUpOnExit(child: ChildProcess, dir: string): () => void {
  const onExit = () => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    rmSync(dir, { recursive: true, force: true });
  };
  const onSignal = (signal: NodeJS.Signals) => process.exit(128 + (signal === 'SIGINT' ? 2 : 15));
  process.once('exit', onExit);
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);
  return () => {
    process.off('exit', onExit);
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
  };
}
