/**
 * The body of a URL monitor (the reference's ChecksV1UrlMonitorCreate / ChecksV1UrlMonitorUpdate), as
 * TypeBox schemas built from the shared pieces in common-check-schema.ts. A URL monitor is a GET of
 * one http(s) URL with status-code (and, our addition, response-time) assertions; the agent runs it
 * with the API check engine (src/agent/checks/url.ts).
 */
import { Type } from 'typebox';
import { URL_ASSERTION_COMPARISONS, URL_ASSERTION_SOURCES } from '../../shared/checks/monitors.ts';
import { assertHttpUrl } from '../routes/http-url.ts';
import {
  assertionSchema,
  checkResponseSchema,
  commonCheckProperties,
  type Mode,
  prop,
  required,
} from './common-check-schema.ts';
import { clientTlsRequestProperties } from './client-tls.ts';

export const URL_DEFAULT_DEGRADED_RESPONSE_TIME_MS = 3000;
export const URL_DEFAULT_MAX_RESPONSE_TIME_MS = 5000;
export const URL_RESPONSE_TIME_MAX_MS = 45000;

function request(mode: Mode) {
  return Type.Object(
    {
      method: prop(mode, (o) => Type.Enum(['GET'], o), 'GET'),
      url: required(mode, Type.String({ minLength: 1, maxLength: 2048 })),
      // The reference gives no default; true as for API checks.
      followRedirects: prop(mode, (o) => Type.Boolean(o), true),
      skipSSL: prop(mode, (o) => Type.Boolean(o), false),
      ipFamily: prop(mode, (o) => Type.Enum(['IPv4', 'IPv6'], o), 'IPv4'),
      // mTLS and a per-check CA bundle (checks/client-tls.ts).
      ...clientTlsRequestProperties(),
      assertions: prop(
        mode,
        (o) => Type.Array(assertionSchema(URL_ASSERTION_SOURCES, URL_ASSERTION_COMPARISONS), o),
        [],
      ),
    },
    { additionalProperties: false },
  );
}

function urlCheckProperties(mode: Mode) {
  return {
    ...commonCheckProperties(mode, 'URL', {
      maximum: URL_RESPONSE_TIME_MAX_MS,
      degraded: URL_DEFAULT_DEGRADED_RESPONSE_TIME_MS,
      max: URL_DEFAULT_MAX_RESPONSE_TIME_MS,
    }),
    request: required(mode, request(mode)),
  };
}

export const UrlCheckCreateBody = Type.Object(urlCheckProperties('create'), { additionalProperties: false });
export const UrlCheckUpdateBody = Type.Object(urlCheckProperties('update'), { additionalProperties: false });
/** A URL monitor as GET returns it (ChecksV1UrlMonitor). */
export const UrlCheckResponse = checkResponseSchema(urlCheckProperties('create'));

/** The URL must be an absolute http(s) URL: a monitor has no variables or group base URL to fill it in. */
export function normalizeUrlBody<B extends Record<string, unknown>>(body: B): B {
  const request = (body.request ?? {}) as { url?: unknown };
  assertHttpUrl('body/request/url', String(request.url ?? ''), { placeholders: false });
  return body;
}
