/**
 * The body of an API check (the reference's ChecksV1ApiCheckCreate / ChecksV1ApiCheckUpdate),
 * as TypeBox schemas. Create fills in the reference's defaults (Ajv's useDefaults applies them);
 * update has none, since it changes only the properties it carries.
 *
 * Only properties the service honours or stores meaningfully are accepted; others the reference
 * lists (alert settings, retry strategy, snippets, groups, ...) are dropped on input, as
 * `additionalProperties: false` with Fastify's removeAdditional strips them without an error.
 */
import { type TSchema, Type } from 'typebox';
import { ASSERTION_COMPARISONS, ASSERTION_SOURCES, BODY_TYPES, HTTP_METHODS } from '../../shared/checks/types.ts';
import { Nullable } from '../routes/schemas.ts';

export const FREQUENCIES = [0, 1, 2, 5, 10, 15, 30, 60, 120, 180, 360, 720, 1440] as const;
/** Seconds between runs of a sub-minute check (frequency 0). */
export const SUB_MINUTE_OFFSETS = [10, 20, 30] as const;
export const RUNTIME_IDS = ['2026.04', '2025.04', '2024.09', '2024.02', '2023.09', '2023.02', '2022.10'] as const;
/**
 * The reference's data-center locations. Accepted and stored so clients written for the reference
 * work unchanged, but never run: this service only runs checks on private locations.
 */
export const DATA_CENTER_LOCATIONS = [
  'us-east-1', 'us-east-2', 'us-west-1', 'us-west-2', 'ca-central-1', 'sa-east-1', 'eu-west-1', 'eu-central-1',
  'eu-west-2', 'eu-west-3', 'eu-north-1', 'eu-south-1', 'me-south-1', 'ap-southeast-1', 'ap-northeast-1',
  'ap-east-1', 'ap-southeast-2', 'ap-southeast-3', 'ap-northeast-2', 'ap-northeast-3', 'ap-south-1', 'af-south-1',
] as const;

export const RESPONSE_TIME_MAX_MS = 45000;
export const DEFAULT_DEGRADED_RESPONSE_TIME_MS = 5000;
export const DEFAULT_MAX_RESPONSE_TIME_MS = 20000;

type Mode = 'create' | 'update';

/** A property with its reference default on create; optional without default on update. */
function prop<T extends TSchema>(mode: Mode, schema: (opts: { default?: unknown }) => T, fallback: unknown) {
  return mode === 'create' ? schema({ default: fallback }) : Type.Optional(schema({}));
}

function keyValue(mode: Mode) {
  return Type.Object(
    {
      key: Type.String({ minLength: 1 }),
      value: Type.String(),
      locked: prop(mode, (o) => Type.Boolean(o), false),
    },
    { additionalProperties: false },
  );
}

function assertion(mode: Mode) {
  return Type.Object(
    {
      source: Type.Enum([...ASSERTION_SOURCES]),
      comparison: Type.Enum([...ASSERTION_COMPARISONS]),
      property: prop(mode, (o) => Type.String(o), ''),
      target: prop(mode, (o) => Type.String(o), ''),
      regex: prop(mode, (o) => Nullable(Type.String(), o), ''),
    },
    { additionalProperties: false },
  );
}

function request(mode: Mode) {
  const required = <T extends TSchema>(s: T) => (mode === 'create' ? s : Type.Optional(s));
  return Type.Object(
    {
      method: required(Type.Enum([...HTTP_METHODS])),
      url: required(Type.String({ minLength: 1, maxLength: 2048 })),
      followRedirects: prop(mode, (o) => Type.Boolean(o), true),
      skipSSL: prop(mode, (o) => Type.Boolean(o), false),
      ipFamily: prop(mode, (o) => Type.Enum(['IPv4', 'IPv6'], o), 'IPv4'),
      body: prop(mode, (o) => Type.String(o), ''),
      bodyType: prop(mode, (o) => Type.Enum([...BODY_TYPES], o), 'NONE'),
      headers: prop(mode, (o) => Type.Array(keyValue(mode), o), []),
      queryParameters: prop(mode, (o) => Type.Array(keyValue(mode), o), []),
      assertions: prop(mode, (o) => Type.Array(assertion(mode), o), []),
      basicAuth: prop(
        mode,
        (o) =>
          Nullable(
            Type.Object({ username: Type.String(), password: Type.String() }, { additionalProperties: false }),
            o,
          ),
        null,
      ),
    },
    { additionalProperties: false },
  );
}

const responseTime = (o: { default?: unknown }) =>
  Nullable(Type.Number({ minimum: 0, maximum: RESPONSE_TIME_MAX_MS }), o);

function apiCheckProperties(mode: Mode) {
  return {
    name: mode === 'create' ? Type.String({ minLength: 1 }) : Type.Optional(Type.String({ minLength: 1 })),
    checkType: prop(mode, (o) => Type.Enum(['API'], o), 'API'),
    activated: prop(mode, (o) => Type.Boolean(o), true),
    muted: prop(mode, (o) => Type.Boolean(o), false),
    doubleCheck: prop(mode, (o) => Type.Boolean(o), true),
    shouldFail: prop(mode, (o) => Type.Boolean(o), false),
    runParallel: prop(mode, (o) => Type.Boolean(o), false),
    locations: prop(mode, (o) => Nullable(Type.Array(Type.Enum([...DATA_CENTER_LOCATIONS])), o), []),
    privateLocations: prop(mode, (o) => Nullable(Type.Array(Type.String({ minLength: 1 })), o), []),
    tags: prop(mode, (o) => Type.Array(Type.String({ minLength: 1 }), o), []),
    runtimeId: prop(mode, (o) => Nullable(Type.Enum([...RUNTIME_IDS]), o), null),
    frequency: prop(mode, (o) => Type.Enum([...FREQUENCIES], o), 10),
    frequencyOffset: Type.Optional(Type.Integer({ minimum: 1 })),
    degradedResponseTime: prop(mode, responseTime, DEFAULT_DEGRADED_RESPONSE_TIME_MS),
    maxResponseTime: prop(mode, responseTime, DEFAULT_MAX_RESPONSE_TIME_MS),
    request: mode === 'create' ? request(mode) : Type.Optional(request(mode)),
  };
}

export const ApiCheckCreateBody = Type.Object(apiCheckProperties('create'), { additionalProperties: false });
export const ApiCheckUpdateBody = Type.Object(apiCheckProperties('update'), { additionalProperties: false });

/** A check as GET returns it (ChecksV1ApiCheck): the accepted body plus id and timestamps. */
export const ApiCheckResponse = Type.Object({
  id: Type.String(),
  ...apiCheckProperties('create'),
  created_at: Type.String({ format: 'date-time' }),
  updated_at: Nullable(Type.String({ format: 'date-time' })),
});
