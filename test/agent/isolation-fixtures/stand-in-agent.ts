/**
 * A stand-in for the agent daemon, in a process of its own so a script that kills its sandbox's
 * parent kills this and not the test runner: it runs the API checks given as JSON lines on stdin in
 * a sandbox pool with the isolation SANDBOX_ISOLATION asks for, and answers each with its outcome as
 * a JSON line on stdout.
 */
import readline from 'node:readline';
import pino from 'pino';
import { apiCheckRunner } from '../../../src/agent/checks/api.ts';
import { defaultRuntimesDir, discoverRuntimes } from '../../../src/agent/runtimes.ts';
import { detectIsolation, loadIsolationSettings } from '../../../src/agent/sandbox/isolation.ts';
import { SandboxPool } from '../../../src/agent/sandbox/pool.ts';
import type { ApiCheckDefinition } from '../../../src/shared/checks/types.ts';

const { runtimes } = await discoverRuntimes(defaultRuntimesDir());
const isolation = await detectIsolation(loadIsolationSettings(process.env));
const pool = new SandboxPool({ runtimes, size: 1, isolation });
process.stdout.write(`${JSON.stringify({ ready: true, isolation: isolation.kind })}\n`);

for await (const line of readline.createInterface({ input: process.stdin })) {
  const check = JSON.parse(line) as ApiCheckDefinition;
  const outcome = await apiCheckRunner.run(check, {
    signal: new AbortController().signal,
    timeoutMs: 10_000,
    log: pino({ level: 'silent' }),
    useOsDnsResolver: false,
    sandboxes: pool,
  });
  process.stdout.write(`${JSON.stringify(outcome)}\n`);
}
await pool.close();
