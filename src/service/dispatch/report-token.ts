/**
 * Error-report tokens and the DSN agents get at registration.
 *
 * The DSN's public key is sent with every error report and ends up in agents' logs and crash
 * dumps, so it must never be the location API key (which can lease jobs and read check
 * definitions, secrets included). It is a separate token that can only post error reports.
 *
 * The service keeps only a hash of it, like every other credential. To hand the same DSN to every
 * agent of a location on every registration without storing the raw token, the token is derived
 * from the location key the agent authenticated with: HMAC-SHA256(key, "outpost-error-reports:" +
 * locationId). It is stable, unguessable without the key, and reveals nothing about the key. A
 * location with two active keys (during rotation) has two valid tokens, one per key.
 */
import { createHash, createHmac } from 'node:crypto';
import { AGENT_API_PREFIX } from '../../shared/protocol.ts';

/** Report tokens are word characters only: the Sentry SDK's DSN parser accepts nothing else as a key. */
export const REPORT_TOKEN_PREFIX = 'ert_';

export function reportTokenFor(rawLocationKey: string, locationId: string): string {
  const mac = createHmac('sha256', rawLocationKey).update(`outpost-error-reports:${locationId}`).digest('hex');
  return REPORT_TOKEN_PREFIX + mac.slice(0, 40);
}

export function hashReportToken(token: string): string {
  return createHash('sha256').update(token, 'utf8').digest('hex');
}

/**
 * Path prefix of the error-report endpoint, per location. Sentry SDKs post to
 * `<DSN path>/api/<project id>/envelope/`, and they only accept an all-digit project id, so the
 * location id lives in the path and the project id is always 1:
 *   DSN      http://ert_…@host:port/agent/v1/errors/<locationId>/1
 *   posts to http://host:port/agent/v1/errors/<locationId>/api/1/envelope/?sentry_key=ert_…
 */
export const ERRORS_PREFIX = `${AGENT_API_PREFIX}/errors`;
export const REPORT_PROJECT_ID = '1';

export function errorReportingDsn(publicUrl: URL, locationId: string, token: string): string {
  // A service behind a path prefix (https://example.com/outpost/) keeps it in the DSN.
  const base = publicUrl.pathname.replace(/\/+$/, '');
  return `${publicUrl.protocol}//${token}@${publicUrl.host}${base}${ERRORS_PREFIX}/${encodeURIComponent(locationId)}/${REPORT_PROJECT_ID}`;
}
