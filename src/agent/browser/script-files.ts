/**
 * What a browser or multistep run puts into its job folder before the script runs: the script, its
 * dependencies, the runtime's libraries (a `node_modules` link), Playwright's video encoder (a link
 * to the system's ffmpeg where Playwright looks for its own, so nothing is downloaded), and for
 * `@playwright/test` scripts the generated config and the fixtures that record pages.
 */
import { cp, mkdir, readFile, symlink, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { ScriptDependency } from '../../shared/checks/types.ts';

/** The script's file in the job folder; errors and stack frames name it. */
export const SCRIPT_FILE = 'script.js';
export const CONFIG_FILE = 'outpost.config.cjs';
export const REPORT_FILE = 'report.json';
export const FIXTURES_FILE = 'outpost-fixtures.cjs';
const INSTRUMENT_FILE = 'outpost-instrument.cjs';
const CHILD_DIR = fileURLToPath(new URL('./child/', import.meta.url));
export const HARNESS_PATH = path.join(CHILD_DIR, 'harness.cjs');

export type ScriptEngine = 'test' | 'script';

/**
 * `test` when the script defines Playwright tests (`test(...)`, `test.describe(...)`, hooks), else
 * `script`: a plain script (`const { chromium } = require('playwright')`, or one using the `page`
 * it is given) runs as the body of an async function. Comments are ignored.
 */
export function scriptEngineOf(code: string): ScriptEngine {
  const bare = code.replace(/\/\*[\s\S]*?\*\//g, '').replace(/(^|[^:])\/\/.*$/gm, '$1');
  return /(^|[^.\w$])test(\.(describe|only|skip|fixme|fail|slow|use|beforeEach|beforeAll|afterEach|afterAll)(\.\w+)*)?\s*\(/.test(
    bare,
  )
    ? 'test'
    : 'script';
}

/**
 * The script with its imports of '@playwright/test' pointed at the fixtures that record pages.
 * Only the module name changes, so every line keeps its number.
 */
export function withRecordingFixtures(code: string): string {
  return code.replace(
    /(\bfrom\s*|\brequire\s*\(\s*|\bimport\s*\(\s*)(['"])@playwright\/test\2/g,
    `$1$2./${FIXTURES_FILE}$2`,
  );
}

/** A dependency path as a path inside the job folder, or null if it would leave it. */
export function dependencyTarget(jobDir: string, rel: string): string | null {
  if (rel === '' || path.isAbsolute(rel) || rel.split(/[\\/]/).some((s) => s === '..' || s === '.' || s === ''))
    return null;
  const target = path.resolve(jobDir, rel);
  return target.startsWith(`${jobDir}${path.sep}`) ? target : null;
}

/** Playwright's video encoder revision for the runtime's Playwright (its browsers.json). */
async function ffmpegRevision(runtimeDir: string): Promise<string | null> {
  try {
    const json = JSON.parse(
      await readFile(path.join(runtimeDir, 'node_modules', 'playwright-core', 'browsers.json'), 'utf8'),
    ) as {
      browsers?: Array<{ name?: string; revision?: string }>;
    };
    return json.browsers?.find((b) => b.name === 'ffmpeg')?.revision ?? null;
  } catch {
    return null;
  }
}

export interface PreparedJob {
  /** PLAYWRIGHT_BROWSERS_PATH for the run: only the ffmpeg link lives there. */
  browsersPath: string;
  /** The Playwright Test CLI of the runtime. */
  cliPath: string;
  configPath: string;
}

export interface PrepareOptions {
  jobDir: string;
  runtimeDir: string;
  engine: ScriptEngine;
  script: string;
  dependencies: readonly ScriptDependency[];
  ffmpegPath: string;
  /** The `@playwright/test` timeout per test, in ms. */
  testTimeoutMs: number;
  /** Playwright's globalTimeout: the whole run, in ms. */
  globalTimeoutMs: number;
  chromiumPath: string;
  noSandbox: boolean;
  args: readonly string[];
}

export async function prepareJobFolder(o: PrepareOptions): Promise<PreparedJob> {
  const { jobDir } = o;
  await symlink(path.join(o.runtimeDir, 'node_modules'), path.join(jobDir, 'node_modules'), 'dir');
  const browsersPath = path.join(jobDir, '.outpost', 'ms-playwright');
  const revision = await ffmpegRevision(o.runtimeDir);
  if (revision) {
    await mkdir(path.join(browsersPath, `ffmpeg-${revision}`), { recursive: true });
    await symlink(o.ffmpegPath, path.join(browsersPath, `ffmpeg-${revision}`, 'ffmpeg-linux'));
  }
  for (const dep of o.dependencies) {
    const target = dependencyTarget(jobDir, dep.path);
    if (!target) continue;
    await mkdir(path.dirname(target), { recursive: true });
    await writeFile(target, dep.content);
  }
  const configPath = path.join(jobDir, CONFIG_FILE);
  if (o.engine === 'test') {
    await writeFile(path.join(jobDir, SCRIPT_FILE), withRecordingFixtures(o.script));
    await cp(path.join(CHILD_DIR, 'fixtures.cjs'), path.join(jobDir, FIXTURES_FILE));
    await cp(path.join(CHILD_DIR, 'instrument.cjs'), path.join(jobDir, INSTRUMENT_FILE));
    await writeFile(configPath, playwrightConfig(o));
  }
  return {
    browsersPath,
    cliPath: path.join(o.runtimeDir, 'node_modules', '@playwright', 'test', 'cli.js'),
    configPath,
  };
}

/** The config of a `@playwright/test` run: one file, one worker, no retries, everything recorded. */
function playwrightConfig(o: PrepareOptions): string {
  const config = {
    testDir: '.',
    testMatch: [SCRIPT_FILE],
    timeout: o.testTimeoutMs,
    globalTimeout: o.globalTimeoutMs,
    workers: 1,
    retries: 0,
    forbidOnly: false,
    outputDir: './test-results',
    preserveOutput: 'always',
    reporter: [['list'], ['json', { outputFile: `./${REPORT_FILE}` }]],
    use: {
      headless: true,
      trace: 'on',
      video: 'on',
      screenshot: 'on',
      launchOptions: { executablePath: o.chromiumPath, chromiumSandbox: !o.noSandbox, args: [...o.args] },
    },
  };
  return `// Written by the Outpost agent for one run.\nmodule.exports = ${JSON.stringify(config, null, 2)};\n`;
}
