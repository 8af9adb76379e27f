/**
 * The body of an API check (the reference's ChecksV1ApiCheckCreate / ChecksV1ApiCheckUpdate),
 * as TypeBox schemas. Create fills in the reference's defaults (Ajv's useDefaults applies them);
 * update has none, since it changes only the properties it carries.
 *
 * Only properties the service honours or stores meaningfully are accepted; others the reference
 * lists (alert channel subscriptions, ...) are dropped on input, as
 * `additionalProperties: false` with Fastify's removeAdditional strips them without an error.
 */
import { Type } from 'typebox';
import {
  API_ASSERTION_SOURCES,
  API_MAX_RESPONSE_BYTES_LIMIT,
  ASSERTION_COMPARISONS,
  BODY_TYPES,
  HTTP_METHODS,
} from '../../shared/checks/types.ts';
import { IntegerId, Nullable } from '../routes/schemas.ts';
import { KeyValue } from '../../shared/checks/common.ts';
import { assertionList, checkSchemas, ipFamily, type Mode, prop, required } from './common-check-schema.ts';
import { clientTlsRequestProperties } from './client-tls.ts';

export { DATA_CENTER_LOCATIONS, FREQUENCIES, RUNTIME_IDS, SUB_MINUTE_OFFSETS } from './common-check-schema.ts';

export const RESPONSE_TIME_MAX_MS = 45000;
export const DEFAULT_DEGRADED_RESPONSE_TIME_MS = 5000;
export const DEFAULT_MAX_RESPONSE_TIME_MS = 20000;
/** The longest setup or teardown script accepted, in characters. */
export const SCRIPT_MAX = 100_000;

/**
 * A header or query parameter as the job carries it, with a non-empty key; `locked` defaults on update
 * too, since a PUT replaces the whole list.
 */
function keyValue() {
  return Type.Object(
    { ...KeyValue.properties, key: Type.String({ minLength: 1 }), locked: Type.Boolean({ default: false }) },
    { additionalProperties: false },
  );
}

function request(mode: Mode) {
  return Type.Object(
    {
      method: required(mode, Type.Enum([...HTTP_METHODS])),
      url: required(mode, Type.String({ minLength: 1, maxLength: 2048 })),
      followRedirects: prop(mode, (o) => Type.Boolean(o), true),
      skipSSL: prop(mode, (o) => Type.Boolean(o), false),
      ipFamily: ipFamily(mode),
      body: prop(mode, (o) => Type.String(o), ''),
      bodyType: prop(mode, (o) => Type.Enum([...BODY_TYPES], o), 'NONE'),
      headers: prop(mode, (o) => Type.Array(keyValue(), o), []),
      queryParameters: prop(mode, (o) => Type.Array(keyValue(), o), []),
      // The reference's sources plus Outpost's HTTP_VERSION, TLS_VERSION, SSL_CERTIFICATE_DAYS_REMAINING.
      assertions: assertionList(mode, API_ASSERTION_SOURCES, ASSERTION_COMPARISONS),
      // Outpost extension, no default: absent or null keeps the agent's 256 KiB kept / 16 MiB read.
      maxResponseBytes: Type.Optional(Nullable(Type.Integer({ minimum: 1, maximum: API_MAX_RESPONSE_BYTES_LIMIT }))),
      // mTLS and a per-check CA bundle (checks/client-tls.ts).
      ...clientTlsRequestProperties(),
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

function apiCheckProperties(mode: Mode) {
  return {
    request: required(mode, request(mode)),
    // Setup and teardown: inline Node.js code and/or a snippet of the account (routes/snippets.ts).
    setupSnippetId: prop(mode, (o) => Nullable(IntegerId(), o), null),
    tearDownSnippetId: prop(mode, (o) => Nullable(IntegerId(), o), null),
    localSetupScript: prop(mode, (o) => Nullable(Type.String({ maxLength: SCRIPT_MAX }), o), null),
    localTearDownScript: prop(mode, (o) => Nullable(Type.String({ maxLength: SCRIPT_MAX }), o), null),
  };
}

const LIMITS = {
  maximum: RESPONSE_TIME_MAX_MS,
  degraded: DEFAULT_DEGRADED_RESPONSE_TIME_MS,
  max: DEFAULT_MAX_RESPONSE_TIME_MS,
};
/** The bodies of POST and PUT, and a check as GET returns it (ChecksV1ApiCheck). */
export const {
  create: ApiCheckCreateBody,
  update: ApiCheckUpdateBody,
  response: ApiCheckResponse,
} = checkSchemas('API', LIMITS, apiCheckProperties);
