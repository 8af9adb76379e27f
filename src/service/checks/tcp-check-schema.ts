/**
 * The body of a TCP check (the reference's ChecksV1TcpCheckCreate / ChecksV1TcpCheckUpdate), as
 * TypeBox schemas built from the shared pieces in common-check-schema.ts. Properties the service does
 * not honour are dropped on input, as for API checks (see api-check-schema.ts).
 *
 * The reference also lists `url` and `body` in the request, older spellings of `hostname` and
 * `data`; they are accepted and stored as `hostname` and `data` (see normalizeTcpBody).
 *
 * Outpost extensions in the request: `tls` (handshake after connecting, data over TLS),
 * `tlsServerName` (SNI and the name the certificate must carry; default the hostname) and `skipSSL`
 * (an untrusted or misnamed certificate does not fail the run), the last two only with `tls`.
 */
import { Type } from 'typebox';
import { TCP_ASSERTION_COMPARISONS, TCP_ASSERTION_SOURCES } from '../../shared/checks/types.ts';
import { BadRequestError } from '../http/errors.ts';
import { Nullable } from '../routes/schemas.ts';
import { assertionList, checkSchemas, ipFamily, type Mode, PortSchema, prop, required } from './common-check-schema.ts';

export const TCP_DEFAULT_DEGRADED_RESPONSE_TIME_MS = 3000;
export const TCP_DEFAULT_MAX_RESPONSE_TIME_MS = 5000;
export const TCP_RESPONSE_TIME_MAX_MS = 45000;

const hostname = Type.String({ minLength: 1, maxLength: 2048 });
/** A DNS name (or IPv4 address) as SNI and certificate matching take it. */
const serverName = Type.String({
  minLength: 1,
  maxLength: 253,
  pattern: '^[A-Za-z0-9_]([A-Za-z0-9_-]{0,61}[A-Za-z0-9_])?(\\.[A-Za-z0-9_]([A-Za-z0-9_-]{0,61}[A-Za-z0-9_])?)*\\.?$',
});

function request(mode: Mode, forResponse = false) {
  return Type.Object(
    {
      // Required in effect (hostname or its alias url); checked in normalizeTcpBody, which can name both.
      hostname: forResponse ? hostname : Type.Optional(hostname),
      ...(forResponse ? {} : { url: Type.Optional(hostname), body: Type.Optional(Nullable(Type.String())) }),
      port: required(mode, PortSchema),
      data: prop(mode, (o) => Nullable(Type.String(), o), null),
      ipFamily: ipFamily(mode),
      // Outpost extensions (the reference has no TLS for TCP checks), stored only when given so a
      // reference-shaped check reads back as it was written; absent means false/null. See normalizeTcpBody.
      tls: Type.Optional(Type.Boolean()),
      tlsServerName: Type.Optional(Nullable(serverName)),
      skipSSL: Type.Optional(Type.Boolean()),
      assertions: assertionList(mode, TCP_ASSERTION_SOURCES, TCP_ASSERTION_COMPARISONS),
    },
    { additionalProperties: false },
  );
}

const LIMITS = {
  maximum: TCP_RESPONSE_TIME_MAX_MS,
  degraded: TCP_DEFAULT_DEGRADED_RESPONSE_TIME_MS,
  max: TCP_DEFAULT_MAX_RESPONSE_TIME_MS,
};
/** The bodies of POST and PUT, and a TCP check as GET returns it (ChecksV1TcpCheck, without the aliases). */
export const {
  create: TcpCheckCreateBody,
  update: TcpCheckUpdateBody,
  response: TcpCheckResponse,
} = checkSchemas('TCP', LIMITS, (mode, forResponse) => ({ request: required(mode, request(mode, forResponse)) }));

/** Folds the reference's older spellings into hostname/data; a TCP check needs a host name. */
export function normalizeTcpBody<B extends Record<string, unknown>>(body: B): B {
  const { url, body: legacyData, ...request } = (body.request ?? {}) as Record<string, unknown>;
  const host = typeof request.hostname === 'string' && request.hostname !== '' ? request.hostname : url;
  if (typeof host !== 'string' || host === '') {
    throw new BadRequestError('body/request/hostname is required: the host name or IP address to connect to');
  }
  const data = request.data ?? legacyData ?? null;
  checkTlsSwitches(request);
  // An empty string sends nothing, like null.
  return { ...body, request: { ...request, hostname: host, data: data === '' ? null : data } };
}

/** tlsServerName and skipSSL only mean something for a TLS check: set without `tls` they are a mistake. */
function checkTlsSwitches(request: Record<string, unknown>): void {
  if (request.tls === true) return;
  if (request.tlsServerName !== undefined && request.tlsServerName !== null) {
    throw new BadRequestError('body/request/tlsServerName applies only when request.tls is true');
  }
  if (request.skipSSL === true) throw new BadRequestError('body/request/skipSSL applies only when request.tls is true');
}
