/**
 * What a browser-check test file runs on: the system Chromium and the real runtimes (checked, not
 * skipped: CI installs both, so their absence is a failure), a sandbox pool on those runtimes, the
 * loopback page server, and a jobs root for the runs' folders.
 */
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { expect } from 'vitest';
import { defaultRuntimesDir, discoverRuntimes, type Runtime } from '../../src/agent/runtimes.ts';
import { SandboxPool } from '../../src/agent/sandbox/pool.ts';
import { CHROMIUM, type PageServer, startPageServer } from './browser-fixtures.ts';

export interface BrowserRig {
  runtimes: Runtime[];
  pool: SandboxPool;
  server: PageServer;
  jobsRoot: string;
}

/**
 * Checks Chromium and the runtimes, then starts the pool and the page server. `jobsRootPrefix` is
 * short on purpose: Chromium's singleton socket lives in the job folder (TMPDIR), and a Unix socket
 * path may not exceed 107 bytes (docs/checks.md).
 */
export async function startBrowserRig(jobsRootPrefix: string, pageSecret = ''): Promise<BrowserRig> {
  expect(existsSync(CHROMIUM), `Chromium at ${CHROMIUM} (apt-get install chromium)`).toBe(true);
  const { runtimes } = await discoverRuntimes(defaultRuntimesDir());
  expect(runtimes.length, 'run npm run runtimes:install').toBeGreaterThan(0);
  const pool = new SandboxPool({ runtimes, size: 0 });
  const server = await startPageServer(pageSecret);
  return { runtimes, pool, server, jobsRoot: mkdtempSync(jobsRootPrefix) };
}

/** Closes what startBrowserRig started, as far as it got. */
export async function stopBrowserRig(rig: Partial<BrowserRig>): Promise<void> {
  await rig.server?.close();
  await rig.pool?.close();
  if (rig.jobsRoot) rmSync(rig.jobsRoot, { recursive: true, force: true });
}
