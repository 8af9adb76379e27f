/**
 * Playwright check suites on the agent, for real: archives unpacked into a job folder, dependencies
 * installed from the registry (npm ci, bun install; cached across this file's tests by the
 * dependency cache), `playwright test` on each engine with the system Chromium, pages served on
 * loopback. Covers passing and failing tests, a broken config, a failed install, the global timeout,
 * a cancel mid-test, CI/OUTPOST and the proxy variables only during the install.
 */
import { existsSync, mkdtempSync, readdirSync, readFileSync, realpathSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { createPlaywrightCheckRunner } from '../../src/agent/checks/playwright.ts';
import {
  CHROMIUM,
  engineInstalled,
  MemoryBundles,
  packSuite,
  runCheck,
  suiteCheck,
  suiteConfig,
  suiteProcesses,
} from './suite-helpers.ts';
import { packageJsonWith } from './suite-package-json.ts';

// Short: Chromium's socket path under the job's TMPDIR must stay under 108 bytes.
const root = realpathSync(mkdtempSync(path.join(os.tmpdir(), 'sr-')));
vi.setConfig({ testTimeout: 120_000 });

const bundles = new MemoryBundles();
const config = suiteConfig(root);
const runner = createPlaywrightCheckRunner({ config, bundles });

let server: Server;
let base = '';
const started: Array<() => void> = [];
beforeAll(async () => {
  server = createServer((req, res) => {
    if (req.url === '/started') {
      for (const f of started.splice(0)) f();
      res.end('ok');
      return;
    }
    res.setHeader('content-type', 'text/html');
    res.end('<html><head><title>Outpost suite</title></head><body><h1>hello</h1></body></html>');
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  await new Promise<void>((r) => server.close(() => r()));
  rmSync(root, { recursive: true, force: true });
});

const passingSpec = () => `
import { test, expect } from '@playwright/test';
test('home page has a title', async ({ page }) => {
  await page.goto(${JSON.stringify(base)});
  await expect(page).toHaveTitle('Outpost suite');
  console.log('env CI=' + process.env.CI + ' OUTPOST=' + process.env.OUTPOST + ' HTTPS_PROXY=' + process.env.HTTPS_PROXY);
});
`;

it('needs Chromium and the suite engines (npm run runtimes:install; .ci/run installs chromium)', () => {
  expect(existsSync(CHROMIUM), `${CHROMIUM} is missing: apt-get install chromium`).toBe(true);
  expect(engineInstalled('node24'), 'runtimes/suite-engines is not installed: npm run runtimes:install').toBe(true);
});

describe('a passing suite', () => {
  it('installs with npm ci, runs on Node 24 with the system Chromium and reports per-test results', async () => {
    const bundle = bundles.add(await packSuite({ files: { 'tests/home.spec.ts': passingSpec() }, omit: ['bun.lock'] }));
    const { outcome, pw, log } = await runCheck(runner, suiteCheck(bundle));
    expect(pw.status, log).toBe('passed');
    expect(outcome.hasFailures).toBe(false);
    expect(outcome.hasErrors).toBe(false);
    expect(outcome.error).toBeNull();
    expect(pw.packageManager).toBe('npm');
    expect(pw.engineVersion).toBe('24');
    expect(pw.playwrightVersion).toBe('1.58.2');
    expect(pw.summary).toMatchObject({ total: 1, passed: 1, failed: 0 });
    expect(pw.tests[0]).toMatchObject({
      title: 'home page has a title',
      status: 'passed',
      outcome: 'expected',
      retries: 0,
      error: null,
      projectName: 'chromium',
    });
    // A scheduled run: OUTPOST always, CI never.
    expect(log).toContain('env CI=undefined OUTPOST=true');
    expect(log).toMatch(/installing dependencies with npm \(package-lock.json\)/);
    // The job folder is gone and nothing it started is left.
    expect(readdirSync(config.jobsRoot)).toEqual([]);
    expect(suiteProcesses(config.jobsRoot)).toEqual([]);
  });

  it('sets CI=true for a test session and restores dependencies from the cache', async () => {
    const bundle = bundles.add(await packSuite({ files: { 'tests/home.spec.ts': passingSpec() }, omit: ['bun.lock'] }));
    const { pw, log } = await runCheck(runner, suiteCheck(bundle, { testSession: true }));
    expect(pw.status, log).toBe('passed');
    expect(pw.dependencyCache).toBe('hit');
    expect(log).toContain('env CI=true OUTPOST=true');
  });

  it('marks a passing run degraded when slower than degradedResponseTime', async () => {
    const bundle = bundles.add(await packSuite({ files: { 'tests/home.spec.ts': passingSpec() }, omit: ['bun.lock'] }));
    const { outcome, pw } = await runCheck(runner, suiteCheck(bundle, { degradedResponseTime: 1 }));
    expect(pw.status).toBe('passed');
    expect(outcome.isDegraded).toBe(true);
    expect(pw.degradedReasons[0]).toMatch(/over the degraded threshold of 1 ms/);
    // The report's header line says so.
    expect(pw.jobLog[0]?.msg).toMatch(
      /^Outpost suite run: PASSED — DEGRADED: the run took \d+ ms, over the degraded threshold of 1 ms \(1 test\(s\): 1 passed/,
    );
  });
});

describe('failures', () => {
  it('reports a failing test with its error, and the failure in the log', async () => {
    const spec = `
import { test, expect } from '@playwright/test';
test('passes', async () => { expect(1).toBe(1); });
test.describe('checkout', () => {
  test('shows the wrong title', async ({ page }) => {
    await page.goto(${JSON.stringify(base)});
    await expect(page).toHaveTitle('Another title', { timeout: 1000 });
  });
});
`;
    const bundle = bundles.add(await packSuite({ files: { 'tests/fail.spec.ts': spec }, omit: ['bun.lock'] }));
    const { outcome, pw, log } = await runCheck(runner, suiteCheck(bundle));
    expect(pw.status, log).toBe('failed');
    expect(outcome.hasFailures).toBe(true);
    expect(outcome.hasErrors).toBe(false);
    expect(pw.summary).toMatchObject({ total: 2, passed: 1, failed: 1 });
    const failed = pw.tests.find((t) => t.status === 'failed');
    expect(failed?.titlePath).toEqual(['fail.spec.ts', 'checkout', 'shows the wrong title']);
    expect(failed?.error).toMatch(/toHaveTitle/);
    expect(outcome.error).toMatch(/^1 of 2 test\(s\) failed; first: checkout › shows the wrong title: /);
    expect(pw.errors.some((e) => String(e.test).includes('shows the wrong title'))).toBe(true);
    expect(log).toMatch(/\[test\/stdout\].*shows the wrong title/);
  });

  it('shows a broken config as a setup error in the log', async () => {
    const bundle = bundles.add(
      await packSuite({
        files: { 'playwright.config.ts': 'export default {{ broken', 'tests/home.spec.ts': passingSpec() },
        omit: ['bun.lock'],
      }),
    );
    const { outcome, pw, log } = await runCheck(runner, suiteCheck(bundle));
    expect(pw.status, log).toBe('setup-error');
    expect(outcome.hasErrors).toBe(true);
    expect(outcome.error).toMatch(/^setup error: /);
    expect(log).toMatch(/\[test\/stderr\].*playwright\.config\.ts/);
    expect(pw.errors[0]).toMatchObject({ phase: 'test' });
  });

  it("shows a failed install (lockfile out of sync) as a setup error with npm's words", async () => {
    const pkg = packageJsonWith({ devDependencies: { 'left-pad': '1.3.0' } });
    const bundle = bundles.add(
      await packSuite({ files: { 'package.json': pkg, 'tests/home.spec.ts': passingSpec() }, omit: ['bun.lock'] }),
    );
    const { outcome, pw, log } = await runCheck(runner, suiteCheck(bundle));
    expect(pw.status, log).toBe('setup-error');
    expect(outcome.error).toMatch(/^setup error: dependency install failed: npm exited with code \d+/);
    expect(log).toMatch(/\[install\/stderr\].*(in sync|lock file)/i);
    expect(pw.tests).toEqual([]);
  });
});

describe('stopping', () => {
  const hangingSpec = () => `
import { test } from '@playwright/test';
test('waits for ever', async ({ page }) => {
  test.setTimeout(0);
  await page.goto(${JSON.stringify(`${base}/started`)});
  await new Promise(() => {});
});
`;

  it('stops at the global timeout, marks the running test and says so in the result', async () => {
    const bundle = bundles.add(await packSuite({ files: { 'tests/hang.spec.ts': hangingSpec() }, omit: ['bun.lock'] }));
    const t0 = Date.now();
    const { outcome, pw, log } = await runCheck(runner, suiteCheck(bundle, { globalTimeoutMs: 20_000 }));
    expect(Date.now() - t0).toBeLessThan(35_000);
    expect(pw.status, log).toBe('timed-out');
    expect(pw.globalTimeoutReached).toBe(true);
    expect(outcome.hasFailures).toBe(true);
    expect(outcome.overMaxResponseTime).toBe(true);
    expect(outcome.error).toMatch(/global timeout of 20 s was reached/);
    // Playwright 1.58 reports the test it was running at its own global timeout as not run (skipped),
    // and says why in the report's errors, which the result carries. On a busy machine Playwright may
    // still be tearing down when the agent's own limit stops it: then the report is partial and the
    // agent's note in the log says why instead.
    expect(pw.tests[0]?.status ?? 'not reported').toMatch(/interrupted|timedOut|skipped|not reported/);
    const playwrightSaidSo = pw.errors.some((e) => /Timed out waiting/i.test(String(e.message)));
    expect(playwrightSaidSo || /global timeout/i.test(log), `${JSON.stringify(pw.errors)}\n${log}`).toBe(true);
    expect(suiteProcesses(config.jobsRoot)).toEqual([]);
  });

  it('cancels within seconds: SIGINT lets Playwright mark the test interrupted, then the tree is killed', async () => {
    const bundle = bundles.add(await packSuite({ files: { 'tests/hang.spec.ts': hangingSpec() }, omit: ['bun.lock'] }));
    const ac = new AbortController();
    const testRunning = new Promise<void>((r) => started.push(r));
    const running = runCheck(runner, suiteCheck(bundle), ac.signal);
    await testRunning;
    const t0 = Date.now();
    ac.abort(new DOMException('run cancelled', 'AbortError'));
    const { outcome, pw, log } = await running;
    expect(Date.now() - t0).toBeLessThan(8_000);
    expect(pw.status, log).toBe('cancelled');
    expect(outcome.error).toMatch(/^cancelled; 1 test\(s\) interrupted/);
    expect(pw.tests[0]).toMatchObject({ title: 'waits for ever', status: 'interrupted' });
    expect(log).toMatch(/stopping the tests: the run was stopped \(SIGINT\)/);
    expect(readdirSync(config.jobsRoot)).toEqual([]);
    expect(suiteProcesses(config.jobsRoot)).toEqual([]);
  });
});

describe('engines', () => {
  for (const engine of ['node22', 'node26'] as const) {
    it(`runs a suite on ${engine}`, async () => {
      expect(engineInstalled(engine), `${engine} is not installed: npm run runtimes:install`).toBe(true);
      const bundle = bundles.add(
        await packSuite({ files: { 'tests/home.spec.ts': passingSpec() }, omit: ['bun.lock'] }),
      );
      const { pw, log } = await runCheck(runner, suiteCheck(bundle, { engine }));
      expect(pw.status, log).toBe('passed');
      expect(pw.engineVersion).toBe(engine.slice(4));
    });
  }

  // Lockfiles of the same fixture project made by pnpm and Yarn classic (test/agent/suite-lockfiles/).
  for (const [lockfile, pm] of [
    ['pnpm-lock.yaml', 'pnpm'],
    ['yarn.lock', 'yarn'],
  ] as const) {
    it(`installs with ${pm} when the project's lockfile is ${lockfile}`, async () => {
      const lock = readFileSync(path.join(import.meta.dirname, 'suite-lockfiles', lockfile), 'utf8');
      const bundle = bundles.add(
        await packSuite({
          files: { [lockfile]: lock, 'tests/home.spec.ts': passingSpec() },
          omit: ['package-lock.json', 'bun.lock'],
        }),
      );
      const { pw, log } = await runCheck(runner, suiteCheck(bundle));
      expect(pw.status, log).toBe('passed');
      expect(pw.packageManager).toBe(pm);
      expect(log).toMatch(new RegExp(`installing dependencies with ${pm} \\(${lockfile.replace('.', '\\.')}\\)`));
    });
  }

  it('runs a suite on Bun 1.3, installed with bun install from bun.lock', async () => {
    expect(engineInstalled('bun1.3'), 'bun is not installed: npm run runtimes:install').toBe(true);
    const bundle = bundles.add(
      await packSuite({ files: { 'tests/home.spec.ts': passingSpec() }, omit: ['package-lock.json'] }),
    );
    const { pw, log } = await runCheck(runner, suiteCheck(bundle, { engine: 'bun1.3' }));
    expect(pw.status, log).toBe('passed');
    expect(pw.packageManager).toBe('bun');
    expect(pw.engineVersion).toBe('1.3');
  });
});

describe('videos', () => {
  it('records a video with the system ffmpeg, linked into the per-version browsers folder (nothing downloaded)', async () => {
    const spec = `
import { test, expect } from '@playwright/test';
test.use({ video: 'on' });
test('records', async ({ page }) => {
  await page.goto(${JSON.stringify(base)});
  await expect(page).toHaveTitle('Outpost suite');
});
`;
    const bundle = bundles.add(await packSuite({ files: { 'tests/video.spec.ts': spec }, omit: ['bun.lock'] }));
    const { pw, log } = await runCheck(runner, suiteCheck(bundle));
    expect(pw.status, log).toBe('passed');
    // The folder stays for the next run of this Playwright version.
    const versions = readdirSync(config.browsersCacheDir);
    expect(versions).toEqual(['1.58.2']);
    expect(readdirSync(path.join(config.browsersCacheDir, '1.58.2')).some((d) => d.startsWith('ffmpeg-'))).toBe(true);
  });
});

describe('proxy variables', () => {
  it('are present during the install only, never in the tests', async () => {
    // NO_PROXY keeps npm off the (absent) proxy for the registry; the preinstall script shows what the install saw.
    const proxied = createPlaywrightCheckRunner({
      config: suiteConfig(root, {
        proxy: { httpProxy: 'http://127.0.0.1:9', httpsProxy: 'http://127.0.0.1:9', noProxy: 'registry.npmjs.org' },
      }),
      bundles,
    });
    const pkg = packageJsonWith({ scripts: { preinstall: 'echo install sees HTTPS_PROXY=$HTTPS_PROXY' } });
    const bundle = bundles.add(
      await packSuite({ files: { 'package.json': pkg, 'tests/home.spec.ts': passingSpec() }, omit: ['bun.lock'] }),
    );
    const { pw, log } = await runCheck(proxied, suiteCheck(bundle));
    expect(pw.status, log).toBe('passed');
    expect(log).toContain('install sees HTTPS_PROXY=http://127.0.0.1:9');
    expect(log).toContain('HTTPS_PROXY=undefined');
  });
});
