/**
 * The body of a browser check (the reference's ChecksV1BrowserCheckCreate / ChecksV1BrowserCheckUpdate)
 * and the pieces multistep checks share with it (multistep-check-schema.ts). Built from the shared
 * pieces of common-check-schema.ts without the response-time thresholds (the reference's browser and
 * multistep bodies have none: a script passes or fails) and with the reference's frequencies (no
 * sub-minute runs: a browser run takes seconds and may last minutes). Properties the service does
 * not honour (intent, ...) are dropped on input, as for the other check types.
 */
import { type TSchema, Type } from 'typebox';
import { BadRequestError } from '../http/errors.ts';
import { Nullable } from '../routes/schemas.ts';
import { checkResponseSchema, commonCheckProperties, type Mode, prop, required } from './common-check-schema.ts';

/** The reference's frequencies for browser and multistep checks, in minutes (no 0: no sub-minute runs). */
export const SCRIPTED_FREQUENCIES = [1, 2, 5, 10, 15, 30, 60, 120, 180, 360, 720, 1440] as const;
/** The longest script accepted, in characters (the reference sets none; a bound keeps jobs small). */
export const BROWSER_SCRIPT_MAX = 500_000;
/** Files beside the script: at most this many, each at most DEPENDENCY_CONTENT_MAX characters. */
export const DEPENDENCIES_MAX = 50;
export const DEPENDENCY_CONTENT_MAX = 500_000;

/**
 * A dependency's path is relative, inside the script's folder, and names a file the agent writes:
 * letters, digits, `.`, `_`, `-` and `/` between segments, no `..`, no leading `/`.
 */
export const DEPENDENCY_PATH_PATTERN = '^(?!.*(^|/)\\.\\.?(/|$))[A-Za-z0-9_.@-]+(/[A-Za-z0-9_.@-]+)*$';

const Dependency = Type.Object(
  {
    path: Type.String({ minLength: 1, maxLength: 1000, pattern: DEPENDENCY_PATH_PATTERN }),
    content: Type.String({ minLength: 1, maxLength: DEPENDENCY_CONTENT_MAX }),
  },
  { additionalProperties: false },
);

/** The properties of a browser or multistep check body (`checkType` says which). */
export function scriptedCheckProperties<K extends 'BROWSER' | 'MULTI_STEP'>(
  mode: Mode,
  checkType: K,
  forResponse = false,
) {
  // Thresholds and frequencyOffset are API-style settings the reference's scripted bodies lack.
  const {
    degradedResponseTime: _d,
    maxResponseTime: _m,
    frequencyOffset: _o,
    frequency: _f,
    ...common
  } = commonCheckProperties(mode, checkType, {
    maximum: 0,
    degraded: 0,
    max: 0,
  });
  const script = Type.String({ minLength: 1, maxLength: BROWSER_SCRIPT_MAX });
  return {
    ...common,
    frequency: prop(mode, (o) => Type.Enum([...SCRIPTED_FREQUENCIES], o), 10),
    // Nullable in the reference, yet required: null is refused with a clear message (normalizeScriptedBody).
    script: forResponse ? script : required(mode, Nullable(script)),
    scriptPath: prop(mode, (o) => Nullable(Type.String({ minLength: 1 }), o), null),
    dependencies: prop(mode, (o) => Nullable(Type.Array(Dependency, { maxItems: DEPENDENCIES_MAX }), o), []),
  } satisfies Record<string, TSchema>;
}

function browserCheckProperties(mode: Mode, forResponse = false) {
  return {
    ...scriptedCheckProperties(mode, 'BROWSER', forResponse),
    sslCheckDomain: prop(mode, (o) => Nullable(Type.String(), o), null),
  };
}

export const BrowserCheckCreateBody = Type.Object(browserCheckProperties('create'), { additionalProperties: false });
export const BrowserCheckUpdateBody = Type.Object(browserCheckProperties('update'), { additionalProperties: false });
/** A browser check as GET returns it (ChecksV1BrowserCheck). */
export const BrowserCheckResponse = checkResponseSchema(browserCheckProperties('create', true));

/**
 * A script is required and cannot be null (the reference marks it nullable for checks that use
 * `scriptPath` in its own code repositories, which this service has none of); dependency paths
 * must be unique and must not be the script's own file name.
 */
export function normalizeScriptedBody<B extends Record<string, unknown>>(body: B): B {
  if (typeof body.script !== 'string' || body.script.trim() === '') {
    throw new BadRequestError('body/script is required: the Playwright script to run, as text');
  }
  const deps = (body.dependencies ?? []) as Array<{ path: string }>;
  const seen = new Set<string>();
  deps.forEach((d, i) => {
    if (seen.has(d.path))
      throw new BadRequestError(
        `body/dependencies/${i}/path: "${d.path}" is given more than once; paths must be unique`,
      );
    seen.add(d.path);
  });
  // PUT's merge (check-writes.ts mergeUpdate) adds an empty `request`; scripted checks have none.
  const { request: _request, ...rest } = body;
  return { ...rest, dependencies: deps } as unknown as B;
}
