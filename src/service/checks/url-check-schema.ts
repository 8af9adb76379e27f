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
  assertionList,
  checkSchemas,
  ipFamily,
  type Mode,
  prop,
  requestOnly,
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
      ipFamily: ipFamily(mode),
      // mTLS and a per-check CA bundle (checks/client-tls.ts).
      ...clientTlsRequestProperties(),
      assertions: assertionList(mode, URL_ASSERTION_SOURCES, URL_ASSERTION_COMPARISONS),
    },
    { additionalProperties: false },
  );
}

const LIMITS = {
  maximum: URL_RESPONSE_TIME_MAX_MS,
  degraded: URL_DEFAULT_DEGRADED_RESPONSE_TIME_MS,
  max: URL_DEFAULT_MAX_RESPONSE_TIME_MS,
};
/** The bodies of POST and PUT, and a URL monitor as GET returns it (ChecksV1UrlMonitor). */
export const {
  create: UrlCheckCreateBody,
  update: UrlCheckUpdateBody,
  response: UrlCheckResponse,
} = checkSchemas('URL', LIMITS, requestOnly(request));

/** The URL must be an absolute http(s) URL: a monitor has no variables or group base URL to fill it in. */
export function normalizeUrlBody<B extends Record<string, unknown>>(body: B): B {
  const request = (body.request ?? {}) as { url?: unknown };
  assertHttpUrl('body/request/url', String(request.url ?? ''), { placeholders: false });
  return body;
}
