/**
 * The reference vendor's CLI (npm `checkly`, pinned with its whole tree by
 * test/fixtures/reference-cli/package-lock.json), for test/e2e/reference-cli.test.ts.
 *
 * Not a devDependency: it brings 263 packages (97 MB, a second TypeScript among them, whose peer range
 * excludes the project's), and `npm install` of it into this project also prunes the `node` package's
 * platform binary that the project's Node 24 comes from. So it is installed with `npm ci
 * --ignore-scripts` (no install script runs; it downloads no browser) into a cache folder named by the
 * lockfile's hash, once per machine or CI cache; later runs reuse it.
 */
import { createHash } from 'node:crypto';
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, renameSync, rmSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { execa } from 'execa';

const FIXTURE = fileURLToPath(new URL('../fixtures/reference-cli/', import.meta.url));
const REPO = fileURLToPath(new URL('../../', import.meta.url));
const FILES = ['package.json', 'package-lock.json'];

/** Where the installs are kept: OUTPOST_REFERENCE_CLI_CACHE, else node_modules/.cache (CI caches node_modules). */
const cacheRoot = () =>
  process.env.OUTPOST_REFERENCE_CLI_CACHE ?? path.join(REPO, 'node_modules', '.cache', 'outpost-reference-cli');

/** The CLI's entry point, installing it first when this lockfile's install is not cached yet. */
export async function installReferenceCli(): Promise<string> {
  const hash = createHash('sha256');
  for (const file of FILES) hash.update(readFileSync(path.join(FIXTURE, file)));
  const dir = path.join(cacheRoot(), hash.digest('hex').slice(0, 16));
  const bin = path.join(dir, 'node_modules', 'checkly', 'bin', 'run');
  if (existsSync(bin)) return bin;
  mkdirSync(cacheRoot(), { recursive: true });
  // Installed beside and renamed into place: a run stopped half-way leaves no half-installed cache.
  const staging = mkdtempSync(path.join(cacheRoot(), 'installing-'));
  try {
    for (const file of FILES) copyFileSync(path.join(FIXTURE, file), path.join(staging, file));
    await execa('npm', ['ci', '--ignore-scripts', '--no-audit', '--no-fund', '--loglevel=error'], {
      cwd: staging,
      timeout: 280_000,
    });
    try {
      renameSync(staging, dir);
    } catch (err) {
      // Another run installed the same lockfile meanwhile: use that one.
      if (!existsSync(bin)) throw err;
    }
  } finally {
    rmSync(staging, { recursive: true, force: true });
  }
  return bin;
}

export interface CliRun {
  exitCode: number;
  stdout: string;
  stderr: string;
}

export interface CliTarget {
  bin: string;
  apiUrl: string;
  apiKey: string;
  accountId: string;
  /** The CLI's HOME: its config files (Conf) go there, never into the developer's. */
  home: string;
}

/**
 * Runs `checkly <args>` against the service, configured as the reference documents for a local API:
 * CHECKLY_ENV=local and CHECKLY_API_URL. Only the variables it needs are passed, so a developer's own
 * CHECKLY_* settings or proxy cannot change what it talks to.
 */
export async function runCli(target: CliTarget, args: string[]): Promise<CliRun> {
  const res = await execa(process.execPath, [target.bin, ...args], {
    extendEnv: false,
    env: {
      PATH: process.env.PATH ?? '/usr/bin:/bin',
      HOME: target.home,
      CHECKLY_ENV: 'local',
      CHECKLY_API_URL: target.apiUrl,
      CHECKLY_API_KEY: target.apiKey,
      CHECKLY_ACCOUNT_ID: target.accountId,
      // No npm registry look-up for a newer version, no prompts (CI mode), no colour codes in the output.
      CHECKLY_SKIP_NEW_VERSION_CHECK: 'true',
      CHECKLY_CLI_MODE: 'ci',
      NO_COLOR: '1',
    },
    cwd: target.home,
    reject: false,
    timeout: 120_000,
  });
  return { exitCode: res.exitCode ?? -1, stdout: res.stdout, stderr: res.stderr };
}
