/**
 * Playwright check suites for tests: a project folder built from test/agent/suite-fixtures (a
 * package.json pinning @playwright/test to the version runtime 2026.04 carries, its package-lock.json
 * and bun.lock, a playwright.config.ts stored as playwright.config.ts.fixture) plus the spec files a test gives, packed as tar.gz with
 * node-tar. Installs are real (npm ci / bun install from the registry) and cached across the tests
 * of a file with the dependency cache, so each engine pays one install.
 */
import { createHash } from 'node:crypto';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import pino from 'pino';
import * as tar from 'tar';
import type { CheckContext, CheckOutcome, CheckRunner } from '../../src/agent/checks/runner.ts';
import type { BundleSource } from '../../src/agent/suites/bundle-source.ts';
import { verifyBundle } from '../../src/agent/suites/bundle-source.ts';
import { defaultEnginesDir, type SuiteRunnerConfig } from '../../src/agent/suites/config.ts';
import type { PlaywrightCheckDefinition, PlaywrightCheckResult, SuiteEngine } from '../../src/shared/checks/types.ts';

export const FIXTURES = fileURLToPath(new URL('./suite-fixtures/', import.meta.url));
export const ENGINES_DIR = defaultEnginesDir();
export const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

export interface SuiteSpec {
  /** Files to add or replace, relative to the project root. */
  files?: Record<string, string>;
  /** Fixture files to leave out (e.g. the lockfile npm should not see). */
  omit?: string[];
}

/** Builds the project folder and packs it; returns the archive bytes. */
export async function packSuite(spec: SuiteSpec): Promise<Buffer> {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'suite-src-'));
  try {
    for (const name of readdirSync(FIXTURES)) {
      // TypeScript fixtures carry a .fixture suffix so the repository's tsc and lint leave them alone.
      const target = name.replace(/\.fixture$/, '');
      if (!spec.omit?.includes(target)) cpSync(path.join(FIXTURES, name), path.join(dir, target), { recursive: true });
    }
    for (const [name, text] of Object.entries(spec.files ?? {})) {
      mkdirSync(path.dirname(path.join(dir, name)), { recursive: true });
      writeFileSync(path.join(dir, name), text);
    }
    const names = readdirSync(dir);
    const out = path.join(dir, '..', `${path.basename(dir)}.tgz`);
    await tar.c({ gzip: true, file: out, cwd: dir, portable: true }, names);
    const bytes = readFileSync(out);
    rmSync(out, { force: true });
    return bytes;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

export function bundleOf(bytes: Buffer): PlaywrightCheckDefinition['codeBundle'] {
  return { sha256: createHash('sha256').update(bytes).digest('hex'), size: bytes.length, format: 'tar.gz' };
}

/** Serves archives from memory by SHA-256, as the service would. */
export class MemoryBundles implements BundleSource {
  readonly #byHash = new Map<string, Buffer>();
  add(bytes: Buffer): PlaywrightCheckDefinition['codeBundle'] {
    const b = bundleOf(bytes);
    this.#byHash.set(b.sha256, bytes);
    return b;
  }
  async fetch(bundle: PlaywrightCheckDefinition['codeBundle']): Promise<Buffer> {
    const bytes = this.#byHash.get(bundle.sha256);
    if (!bytes) throw new Error(`no bundle ${bundle.sha256}`);
    return verifyBundle(bytes, bundle);
  }
}

export function suiteConfig(root: string, extra: Partial<SuiteRunnerConfig> = {}): SuiteRunnerConfig {
  return {
    enginesDir: ENGINES_DIR,
    chromiumPath: CHROMIUM,
    ffmpegPath: '/usr/bin/ffmpeg',
    browsersCacheDir: path.join(root, 'ms-playwright'),
    dependencyCache: true,
    dependencyCacheDir: path.join(root, 'dep-cache'),
    dependencyCacheMaxEntries: 20,
    jobsRoot: path.join(root, 'j'),
    bundleMaxBytes: 50 * 1024 * 1024,
    unpackedMaxBytes: 200 * 1024 * 1024,
    maxEntries: 10_000,
    logMaxBytes: 512 * 1024,
    cancelGraceMs: 3_000,
    proxy: { httpProxy: undefined, httpsProxy: undefined, noProxy: undefined },
    // As the agent passes its own: installs reach the registry through whatever TLS this machine trusts.
    extraCaCerts: process.env.NODE_EXTRA_CA_CERTS,
    apiUrl: undefined,
    apiKey: undefined,
    ...extra,
  };
}

export function suiteCheck(
  bundle: PlaywrightCheckDefinition['codeBundle'],
  extra: Partial<PlaywrightCheckDefinition> = {},
): PlaywrightCheckDefinition {
  return {
    id: 'check-suite',
    accountId: 'acc',
    name: 'suite',
    checkType: 'PLAYWRIGHT',
    shouldFail: false,
    runtimeId: '2026.04',
    codeBundle: bundle,
    engine: 'node24' as SuiteEngine,
    workingDir: null,
    testArgs: [],
    installArgs: null,
    globalTimeoutMs: 120_000,
    degradedResponseTime: null,
    testSession: false,
    ...extra,
  };
}

export const quietLog = pino({ level: 'silent' });

export async function runCheck(
  runner: CheckRunner<PlaywrightCheckDefinition>,
  check: PlaywrightCheckDefinition,
  signal: AbortSignal = new AbortController().signal,
  extra: Partial<CheckContext> = {},
): Promise<{ outcome: CheckOutcome; pw: PlaywrightCheckResult; log: string }> {
  const outcome = await runner.run(check, {
    signal,
    timeoutMs: check.globalTimeoutMs + 60_000,
    log: quietLog,
    useOsDnsResolver: false,
    ...extra,
  });
  const pw = outcome.details?.playwrightCheckResult as PlaywrightCheckResult;
  return { outcome, pw, log: pw.jobLog.map((l) => `[${l.phase}/${l.stream}] ${l.msg}`).join('\n') };
}

/** Engine binaries present here (npm run runtimes:install); a test needing one that is absent fails. */
export function engineInstalled(engine: SuiteEngine): boolean {
  const p =
    engine === 'bun1.3'
      ? path.join(ENGINES_DIR, 'node_modules', 'bun', 'bin', 'bun.exe')
      : path.join(ENGINES_DIR, 'node_modules', engine, 'bin', 'node');
  return existsSync(p);
}

/** Live processes started for suites under `jobsRoot` (their HOME and TMPDIR are inside it). */
export function suiteProcesses(jobsRoot: string): number[] {
  const found: number[] = [];
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const stat = readFileSync(`/proc/${name}/stat`, 'utf8');
      if (/\) [ZX] /.test(stat)) continue;
      const environ = readFileSync(`/proc/${name}/environ`, 'latin1');
      if (environ.includes('OUTPOST_SUITE_ID=') && environ.includes(jobsRoot)) found.push(Number(name));
    } catch {
      // gone or not readable
    }
  }
  return found;
}
