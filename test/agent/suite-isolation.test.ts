/**
 * Playwright check suites under a uid of their own (docs/suites.md, "Isolation"; docs/sandbox.md,
 * "Signals and users"): the install's lifecycle scripts and the tests cannot signal a process of the
 * agent's user, cannot write into the shared browsers folder or dependency cache, cannot make the
 * agent read or write a file outside the job folder (attachment paths, links), and leave no process or
 * /tmp file of their uid behind. Real runs (npm ci, the system Chromium), as few as possible; as
 * root, as CI and the standard image run.
 */
import {
  chmodSync,
  chownSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  realpathSync,
  rmSync,
  statSync,
} from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { ArtifactSpec } from '../../src/agent/artifacts/uploader.ts';
import { createPlaywrightCheckRunner } from '../../src/agent/checks/playwright.ts';
import type { CheckRunner } from '../../src/agent/checks/runner.ts';
import { detectIsolation, type SandboxIsolation } from '../../src/agent/sandbox/isolation.ts';
import { SandboxPool } from '../../src/agent/sandbox/pool.ts';
import { dependencyCacheKey } from '../../src/agent/suites/dependency-cache.ts';
import { runSuite } from '../../src/agent/suites/run-suite.ts';
import { agentFolder, SharedFolderError } from '../../src/agent/suites/suite-uid.ts';
import type { PlaywrightCheckDefinition } from '../../src/shared/checks/types.ts';
import { processesOfUid, startVictim } from './isolation-helpers.ts';
import { MemoryBundles, packSuite, runCheck, suiteCheck, suiteConfig } from './suite-helpers.ts';
import { packageJsonWith } from './suite-package-json.ts';

vi.setConfig({ testTimeout: 180_000 });
/** A range of its own: other test files switch uids on this machine at the same time. */
const UID_BASE = 64_000;
// Short (Chromium's socket path) and passable by the sandbox uids, as /tmp is.
const root = realpathSync(mkdtempSync('/tmp/si-'));
chmodSync(root, 0o711);
const config = suiteConfig(root);
const bundles = new MemoryBundles();
let isolation: SandboxIsolation;
const leftovers: number[] = [];

beforeAll(async () => {
  expect(process.getuid?.(), 'these tests run as root, as CI does').toBe(0);
  isolation = await detectIsolation({ mode: 'uid', uidBase: UID_BASE });
});
afterAll(() => {
  for (const pid of leftovers) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // gone, as it should be
    }
  }
  rmSync(root, { recursive: true, force: true });
});

const PACKAGE_JSON = packageJsonWith({ scripts: { postinstall: 'node postinstall.js' } });

// npm shows a lifecycle script's output only when it fails: the script writes what it saw to a file the test prints.
const POSTINSTALL = `
const fs = require('node:fs');
const lines = ['postinstall uid=' + process.getuid()];
const attempt = (what, fn) => { try { fn(); lines.push('postinstall ' + what + ': done'); } catch (e) { lines.push('postinstall ' + what + ': ' + e.code); } };
attempt('kill victim', () => process.kill(Number(process.env.VICTIM), 'SIGKILL'));
attempt('write cache', () => fs.writeFileSync(process.env.CACHE_DIR + '/poison', 'x'));
// A link where the agent writes its wrapper config: the agent must not write through it.
fs.symlinkSync(process.env.WRAPPER_TARGET, 'outpost.playwright.config.ts');
fs.writeFileSync('postinstall.log', lines.join('\\n'));
`;

const SPEC = `
import { test, expect } from '@playwright/test';
import fs from 'node:fs';
import { spawn } from 'node:child_process';
// The ffmpeg link in the read-only browsers folder works for the run's uid.
test.use({ video: 'on' });
test('runs under its own uid', async ({ page }) => {
  await page.setContent('<title>isolated</title>');
  await expect(page).toHaveTitle('isolated');
  console.log(fs.readFileSync('postinstall.log', 'utf8'));
  console.log('test uid=' + process.getuid());
  // Leftovers: a process out of the group, the job folder and the marker variable, and a file in /tmp.
  const child = spawn('setsid', ['sleep', '300'], { detached: true, stdio: 'ignore', cwd: '/', env: {} });
  child.unref();
  console.log('leftover pid=' + child.pid);
  fs.writeFileSync('/tmp/suite-leftover-' + process.getuid(), 'x');
  // Paths the agent must not read for the run: a file elsewhere, and a link to one.
  const link = test.info().outputPath('link.txt');
  fs.symlinkSync('/etc/shadow', link);
  test.info().attachments.push({ name: 'elsewhere', contentType: 'text/plain', path: '/etc/shadow' });
  test.info().attachments.push({ name: 'link', contentType: 'text/plain', path: link });
  let browsers = 'done';
  try { fs.writeFileSync(process.env.PLAYWRIGHT_BROWSERS_PATH + '/poison', 'x'); } catch (e) { browsers = e.code; }
  console.log('test write browsers: ' + browsers);
  process.kill(Number(process.env.VICTIM), 'SIGKILL');
});
`;

// Its output dies with the runner, so it tells its uid over HTTP.
const KILL_PARENT_SPEC = `
import { test } from '@playwright/test';
test('kills its own runner', async () => {
  await fetch(process.env.REPORT_URL + '?uid=' + process.getuid());
  process.kill(process.ppid, 'SIGKILL');
});
`;

/** The uid the second run's test reports: /?uid=N on a loopback server. */
async function uidReporter(): Promise<{ url: string; uid: Promise<number>; close(): void }> {
  let tell: (uid: number) => void = () => {};
  const uid = new Promise<number>((resolve) => {
    tell = resolve;
  });
  const server = createServer((req, res) => {
    tell(Number(new URL(req.url ?? '/', 'http://x').searchParams.get('uid')));
    res.end('ok');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/`, uid, close: () => server.close() };
}

describe('a suite run under its own uid', () => {
  it("cannot signal the agent's user or write into the shared caches, fails its own run only, and leaves nothing of its uid", async () => {
    // The first run with an artifact collector, to see what the agent takes from the run's folder.
    const artifacts: ArtifactSpec[] = [];
    const collector = {
      add: async (spec: ArtifactSpec) => {
        artifacts.push(spec);
        return { ok: true as const, ref: { name: spec.name, kind: spec.kind, contentType: '', size: 0, sha256: '' } };
      },
    };
    const direct: CheckRunner<PlaywrightCheckDefinition> = {
      checkType: 'PLAYWRIGHT',
      run: (check, ctx) =>
        runSuite(check, { config, bundles, signal: ctx.signal, log: ctx.log, artifacts: collector, isolation }),
    };
    // The second as the daemon runs it: the isolation comes with its sandbox pool.
    const runner = createPlaywrightCheckRunner({ config, bundles });
    const sandboxes = new SandboxPool({ runtimes: [], size: 0, isolation });
    const victim = startVictim();
    const reporter = await uidReporter();
    try {
      const env = (spec: string) => ({
        files: { 'package.json': PACKAGE_JSON, 'postinstall.js': POSTINSTALL, 'tests/iso.spec.ts': spec },
        omit: ['bun.lock'],
      });
      const variables = [
        { key: 'VICTIM', value: String(victim.pid), secret: false },
        { key: 'CACHE_DIR', value: config.dependencyCacheDir, secret: false },
        { key: 'REPORT_URL', value: reporter.url, secret: false },
        { key: 'WRAPPER_TARGET', value: path.join(root, 'written-through-a-link'), secret: false },
      ];
      const first = await runCheck(
        direct,
        suiteCheck(bundles.add(await packSuite(env(SPEC))), { environmentVariables: variables }),
      );
      for (const m of first.log.matchAll(/leftover pid=(\d+)/g)) leftovers.push(Number(m[1]));
      expect(first.pw.status, first.log).toBe('failed');
      expect(first.outcome.hasErrors).toBe(false);
      expect(first.pw.tests[0]?.error).toMatch(/kill EPERM/);
      const uid = Number(/test uid=(\d+)/.exec(first.log)?.[1]);
      expect(uid).toBeGreaterThanOrEqual(UID_BASE);
      expect(uid).toBeLessThan(UID_BASE + 1024);
      expect(first.log).toContain(`postinstall uid=${uid}`);
      expect(first.log).toContain('postinstall kill victim: EPERM');
      expect(first.log).toContain('postinstall write cache: EACCES');
      expect(first.log).toContain('test write browsers: EACCES');
      expect(await victim.alive()).toBe(true);
      expect(processesOfUid(uid)).toEqual([]);
      expect(existsSync(`/tmp/suite-leftover-${uid}`)).toBe(false);
      expect(readdirSync(config.jobsRoot)).toEqual([]);
      expect(existsSync(path.join(root, 'written-through-a-link'))).toBe(false);
      // The JSON report was taken; nothing from outside the run's folder was.
      expect(artifacts.map((a) => a.name)).toContain('playwright-report.json');
      expect(artifacts.filter((a) => a.kind === 'video')).toHaveLength(1);
      expect(artifacts.filter((a) => !a.path.startsWith(`${config.jobsRoot}/`))).toEqual([]);
      expect(artifacts.map((a) => a.name).filter((n) => /link|shadow/.test(n))).toEqual([]);
      // The cache holds the agent's copy, out of every sandbox's reach.
      const cache = statSync(config.dependencyCacheDir);
      expect([cache.uid, cache.mode & 0o777]).toEqual([0, 0o700]);
      expect(readdirSync(config.dependencyCacheDir).filter((n) => /^[0-9a-f]{64}$/.test(n))).toHaveLength(1);

      // Killing its own runner fails that run only; the next run of the check restores its own cache entry.
      const second = await runCheck(
        runner,
        suiteCheck(bundles.add(await packSuite(env(KILL_PARENT_SPEC))), { environmentVariables: variables }),
        undefined,
        { sandboxes },
      );
      expect(second.outcome.hasFailures, second.log).toBe(true);
      expect(second.pw.status).toBe('setup-error');
      expect(second.outcome.error).toMatch(/Playwright did not produce a report \(exit code SIGKILL\)/);
      expect(second.pw.dependencyCache).toBe('hit');
      const uid2 = await reporter.uid;
      expect(uid2).toBeGreaterThanOrEqual(UID_BASE);
      expect(uid2).toBeLessThan(UID_BASE + 1024);
      expect(processesOfUid(uid2)).toEqual([]);
      expect(await victim.alive()).toBe(true);
    } finally {
      victim.stop();
      reporter.close();
    }
  });
});

describe('shared caches', () => {
  it("keys the dependency cache by the check, so one check's install is never restored into another's run", () => {
    const parts = {
      lockfile: Buffer.from('lock'),
      packageJson: Buffer.from('{}'),
      packageManager: 'npm',
      installArgs: null,
      engine: 'node24',
    };
    expect(dependencyCacheKey({ ...parts, scope: 'acc-a/check-1' })).not.toBe(
      dependencyCacheKey({ ...parts, scope: 'acc-b/check-2' }),
    );
    expect(dependencyCacheKey({ ...parts, scope: 'acc-a/check-1' })).toBe(
      dependencyCacheKey({ ...parts, scope: 'acc-a/check-1' }),
    );
  });

  it('refuses a cache folder a sandbox uid made first (or anyone may write to), naming the variable', async () => {
    const squatted = path.join(root, 'squatted');
    mkdirSync(squatted);
    chownSync(squatted, UID_BASE + 1000, UID_BASE + 1000);
    await expect(agentFolder(squatted, 'PLAYWRIGHT_BROWSERS_CACHE_DIR', 0o755)).rejects.toThrow(SharedFolderError);
    await expect(agentFolder(squatted, 'PLAYWRIGHT_BROWSERS_CACHE_DIR', 0o755)).rejects.toThrow(
      /^PLAYWRIGHT_BROWSERS_CACHE_DIR: .* owned by uid 65000/,
    );
    const open = path.join(root, 'open');
    mkdirSync(open);
    chmodSync(open, 0o777);
    await expect(agentFolder(open, 'DEPENDENCY_CACHE_DIR', 0o700)).rejects.toThrow(/mode 777/);
    const mine = path.join(root, 'mine', 'cache');
    await agentFolder(mine, 'DEPENDENCY_CACHE_DIR', 0o700);
    expect(statSync(mine).mode & 0o777).toBe(0o700);
  });
});
