/**
 * The body of a Playwright check suite (the reference's ChecksV1PlaywrightCheck), as TypeBox
 * schemas built from the shared pieces, plus what the reference leaves to us (docs/suites.md):
 *  - `codeBundle`: the project archive (tar.gz or zip) as base64, write-only. The service checks it
 *    (a Playwright project: package.json, a lockfile, playwright.config.*) and stores it; GET shows
 *    `codeBundlePath` and `cacheHash` (the archive's SHA-256) instead;
 *  - `engine`: the reference's `node`/`bun` with `engineVersion` ("22", "24", "26"; "1.3"), or one
 *    word (`node22`, `node24`, `node26`, `bun1.3`); stored in the reference's two fields;
 *  - `globalTimeout`: seconds for install and tests together, default 3600 (the reference's 60
 *    minutes), at most PLAYWRIGHT_MAX_GLOBAL_TIMEOUT_SECONDS;
 *  - `degradedResponseTime`: a passing run slower than this (ms) is degraded; flaky tests always are.
 * `testCommand` must be `npx playwright test` (or bunx/pnpm/yarn playwright test) plus plain
 * arguments; `installCommand` is empty (install from the lockfile) or the package manager the
 * lockfile names plus plain arguments. Neither runs through a shell.
 */
import { Type } from 'typebox';
import {
  DEFAULT_SUITE_ENGINE,
  DEFAULT_SUITE_GLOBAL_TIMEOUT_MS,
  type PlaywrightCheckDefinition,
  SUITE_ENGINES,
  type SuiteEngine,
} from '../../shared/checks/types.ts';
import { BadRequestError } from '../http/errors.ts';
import { BoundedInteger, Nullable } from '../routes/schemas.ts';
import type { StoredCheck } from '../store/store.ts';
import { checkResponseSchema, commonCheckProperties, type Mode, prop } from './common-check-schema.ts';

export const DEFAULT_TEST_COMMAND = 'npx playwright test';
/** The schema's ceiling for globalTimeout: the most PLAYWRIGHT_MAX_GLOBAL_TIMEOUT_SECONDS may allow (7 days). */
const GLOBAL_TIMEOUT_CEILING_SECONDS = 7 * 24 * 3600;
const ENGINE_WORDS = ['node', 'bun', ...SUITE_ENGINES] as const;
export const ENGINE_VERSIONS: Record<'node' | 'bun', readonly string[]> = { node: ['22', '24', '26'], bun: ['1.3'] };

function playwrightProperties(mode: Mode, forResponse = false) {
  const {
    maxResponseTime: _max,
    degradedResponseTime: _degraded,
    ...common
  } = commonCheckProperties(mode, 'PLAYWRIGHT', {
    maximum: Number.MAX_SAFE_INTEGER,
    degraded: 0,
    max: 0,
  });
  return {
    ...common,
    degradedResponseTime: prop(mode, (o) => Nullable(BoundedInteger(0), o), null),
    ...(forResponse
      ? {
          codeBundlePath: Type.String(),
          cacheHash: Nullable(Type.String()),
          codeBundleSize: Type.Optional(Type.Integer()),
          codeBundleFormat: Type.Optional(Type.String()),
        }
      : {
          // Required on create (checked in the route, which can say what it must hold).
          codeBundle: Type.Optional(
            Type.String({ minLength: 1, description: 'The project archive (tar.gz or zip), base64.' }),
          ),
          // Read-only: accepted so a GET body can be PUT back unchanged, then ignored.
          codeBundlePath: Type.Optional(Type.String()),
          cacheHash: Type.Optional(Nullable(Type.String())),
          codeBundleSize: Type.Optional(BoundedInteger(0)),
          codeBundleFormat: Type.Optional(Type.String()),
        }),
    playwrightVersion: prop(mode, (o) => Nullable(Type.String({ maxLength: 50 }), o), null),
    workingDir: prop(mode, (o) => Nullable(Type.String({ maxLength: 500 }), o), null),
    testCommand: prop(mode, (o) => Type.String({ minLength: 1, maxLength: 2000, ...o }), DEFAULT_TEST_COMMAND),
    installCommand: prop(mode, (o) => Type.String({ maxLength: 2000, ...o }), ''),
    browsers: prop(mode, (o) => Type.Array(Type.Enum(['chromium']), { ...o, maxItems: 1 }), ['chromium']),
    engine: forResponse
      ? Nullable(Type.Enum(['node', 'bun']))
      : prop(mode, (o) => Nullable(Type.Enum([...ENGINE_WORDS]), o), null),
    engineVersion: prop(mode, (o) => Nullable(Type.String({ maxLength: 10 }), o), null),
    globalTimeout: prop(
      mode,
      (o) => Type.Integer({ minimum: 1, maximum: GLOBAL_TIMEOUT_CEILING_SECONDS, ...o }),
      DEFAULT_SUITE_GLOBAL_TIMEOUT_MS / 1000,
    ),
  };
}

export const PlaywrightCheckCreateBody = Type.Object(playwrightProperties('create'), { additionalProperties: false });
export const PlaywrightCheckUpdateBody = Type.Object(playwrightProperties('update'), { additionalProperties: false });
/** A suite as GET returns it (ChecksV1PlaywrightCheck plus our fields). */
export const PlaywrightCheckResponse = checkResponseSchema(playwrightProperties('create', true));

export const TriggerBody = Type.Object(
  {
    /** true (default): a test session, the suite sees CI=true; false: like a scheduled run. */
    testSession: Type.Optional(Type.Boolean({ default: true })),
  },
  { additionalProperties: false },
);

/** The engine a body names, in one word; a 400 naming the field when the pair makes no sense. */
export function engineOf(engine: unknown, engineVersion: unknown): SuiteEngine {
  if (engine === null || engine === undefined) {
    if (engineVersion !== null && engineVersion !== undefined) {
      throw new BadRequestError('body/engineVersion needs body/engine ("node" or "bun")');
    }
    return DEFAULT_SUITE_ENGINE;
  }
  if ((SUITE_ENGINES as readonly unknown[]).includes(engine)) {
    const word = engine as SuiteEngine;
    const version = word.startsWith('node') ? word.slice(4) : '1.3';
    if (engineVersion !== null && engineVersion !== undefined && engineVersion !== version) {
      throw new BadRequestError(
        `body/engineVersion "${String(engineVersion)}" contradicts body/engine "${word}"; leave engineVersion out`,
      );
    }
    return word;
  }
  const kind = engine as 'node' | 'bun';
  const allowed = ENGINE_VERSIONS[kind];
  const version =
    engineVersion === null || engineVersion === undefined ? (kind === 'node' ? '24' : '1.3') : String(engineVersion);
  // "24.1" or "1.3.9" name the same engine as "24" and "1.3".
  const match = allowed.find((v) => version === v || version.startsWith(`${v}.`));
  if (!match) throw new BadRequestError(`body/engineVersion must be one of ${allowed.join(', ')} for engine "${kind}"`);
  return (kind === 'node' ? `node${match}` : 'bun1.3') as SuiteEngine;
}

/** Plain words: no quotes, variables or shell operators, since nothing here runs through a shell. */
function words(field: string, text: string): string[] {
  if (/["'`$\\|;&<>(){}*?!#~\n\r]/.test(text)) {
    throw new BadRequestError(
      `${field} may hold plain words only (no quotes, variables or shell operators): it is not run through a shell`,
    );
  }
  return text
    .trim()
    .split(/\s+/)
    .filter((w) => w !== '');
}

const TEST_PREFIXES = [
  ['npx', 'playwright', 'test'],
  ['bunx', 'playwright', 'test'],
  ['pnpm', 'playwright', 'test'],
  ['pnpm', 'exec', 'playwright', 'test'],
  ['yarn', 'playwright', 'test'],
  ['playwright', 'test'],
];

/** The arguments after `playwright test` in a testCommand. */
export function testArgsOf(testCommand: string): string[] {
  const w = words('body/testCommand', testCommand);
  const prefix = TEST_PREFIXES.find((p) => p.every((x, i) => w[i] === x));
  if (!prefix)
    throw new BadRequestError(
      'body/testCommand must start with "npx playwright test" (or bunx, pnpm or yarn playwright test), followed by its arguments',
    );
  return w.slice(prefix.length);
}

/** The package manager's arguments in an installCommand; null when empty (install from the lockfile). */
export function installArgsOf(installCommand: string): string[] | null {
  const w = words('body/installCommand', installCommand);
  if (w.length === 0) return null;
  if (!['npm', 'pnpm', 'yarn', 'bun'].includes(w[0] ?? '')) {
    throw new BadRequestError(
      'body/installCommand must be empty (install from the lockfile) or start with npm, pnpm, yarn or bun',
    );
  }
  return w.slice(1);
}

export function safeWorkingDir(dir: unknown): string | null {
  if (dir === null || dir === undefined || dir === '' || dir === '.') return null;
  const d = String(dir).replace(/^\.\//, '').replace(/\/+$/, '');
  if (d.startsWith('/') || d.split('/').some((p) => p === '..' || p === '') || d.includes('\\')) {
    throw new BadRequestError('body/workingDir must be a relative folder inside the archive, without ".."');
  }
  return d;
}

/** Checks and canonicalises what the schema cannot: engine pair, commands, working folder, frequency, timeout. */
export function normalizePlaywrightBody<B extends Record<string, unknown>>(
  body: B,
  maxGlobalTimeoutSeconds: number,
): B {
  if (body.frequency === 0)
    throw new BadRequestError('body/frequency must be at least 1 (minutes) for Playwright check suites');
  const engine = engineOf(body.engine, body.engineVersion);
  testArgsOf(String(body.testCommand ?? DEFAULT_TEST_COMMAND));
  installArgsOf(String(body.installCommand ?? ''));
  const timeout = Number(body.globalTimeout ?? DEFAULT_SUITE_GLOBAL_TIMEOUT_MS / 1000);
  if (timeout > maxGlobalTimeoutSeconds) {
    throw new BadRequestError(
      `body/globalTimeout must be at most ${maxGlobalTimeoutSeconds} seconds (PLAYWRIGHT_MAX_GLOBAL_TIMEOUT_SECONDS)`,
    );
  }
  const { codeBundle: _bundle, ...rest } = body;
  return {
    ...rest,
    engine: engine.startsWith('node') ? 'node' : 'bun',
    engineVersion: engine.startsWith('node') ? engine.slice(4) : '1.3',
    workingDir: safeWorkingDir(body.workingDir),
  } as unknown as B;
}

/** How much longer than the suite's global timeout the agent's hard limit is (stopping and reporting). */
export const SUITE_JOB_GRACE_MS = 60_000;

/** The job's wall-clock limit for a suite: its global timeout plus time to stop and report. */
export function suiteJobTimeoutMs(body: Record<string, unknown>): number {
  const seconds = typeof body.globalTimeout === 'number' ? body.globalTimeout : DEFAULT_SUITE_GLOBAL_TIMEOUT_MS / 1000;
  return seconds * 1000 + SUITE_JOB_GRACE_MS;
}

/** The definition of a suite's job (definition.ts calls it for PLAYWRIGHT). */
export function toPlaywrightDefinition(
  stored: StoredCheck,
  base: Pick<PlaywrightCheckDefinition, 'id' | 'accountId' | 'name' | 'shouldFail' | 'runtimeId'>,
): PlaywrightCheckDefinition {
  const body = stored.body;
  const seconds = typeof body.globalTimeout === 'number' ? body.globalTimeout : DEFAULT_SUITE_GLOBAL_TIMEOUT_MS / 1000;
  return {
    ...base,
    checkType: 'PLAYWRIGHT',
    codeBundle: {
      sha256: String(body.cacheHash ?? ''),
      size: typeof body.codeBundleSize === 'number' ? body.codeBundleSize : 0,
      format: body.codeBundleFormat === 'zip' ? 'zip' : 'tar.gz',
    },
    engine: engineOf(body.engine ?? null, body.engineVersion ?? null),
    workingDir: typeof body.workingDir === 'string' && body.workingDir !== '' ? body.workingDir : null,
    testArgs: testArgsOf(String(body.testCommand ?? DEFAULT_TEST_COMMAND)),
    installArgs: installArgsOf(String(body.installCommand ?? '')),
    globalTimeoutMs: seconds * 1000,
    degradedResponseTime: typeof body.degradedResponseTime === 'number' ? body.degradedResponseTime : null,
    // Set only on the in-memory copy a trigger enqueues (routes/checks-playwright.ts), never stored.
    testSession: body[TEST_SESSION_FLAG] === true,
  };
}

/** The key of the trigger's in-memory mark; not a body property (the schemas reject it). */
export const TEST_SESSION_FLAG = '__outpostTestSession';
