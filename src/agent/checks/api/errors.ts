/**
 * Names for the ways a request to a check's target can go wrong, worded for the person who reads the
 * check result (not for the agent's developers). Every one of these is a *check failure*: the
 * target (or the network to it) misbehaved, the agent did its job. They end up as the outcome's
 * `error` and as `apiCheckResult.requestError`.
 */
import { isNoRouteCode, noRouteMessage } from '../net/unreachable.ts';

/** The step the request was in when it failed; used to say what a timeout interrupted. */
export type RequestPhase = 'setup' | 'dns' | 'connect' | 'tls' | 'response' | 'body';

const PHASE_WORDS: Record<RequestPhase, string> = {
  setup: 'preparing the request',
  dns: 'resolving the host name',
  connect: 'connecting',
  tls: 'in the TLS handshake',
  response: 'waiting for the response',
  body: 'reading the response body',
};

/**
 * A failure of the target that the request code already put into words (a TLS verification error,
 * an invalid URL or redirect location). `code` is kept for logs and tests.
 */
export class TargetError extends Error {
  override readonly name = 'TargetError';
  readonly code: string;
  constructor(code: string, message: string) {
    super(message);
    this.code = code;
  }
}

/** Where the failing request was going, to put host and address into the message. */
export interface ErrorContext {
  /** Host name from the URL (without IPv6 brackets). */
  host: string;
  port: number;
  /** The IP the connection went to, once DNS has answered. */
  address?: string | null;
  phase: RequestPhase;
}

/** Codes for which a name did not resolve: getaddrinfo's and c-ares' spellings. */
const DNS_CODES = new Set([
  'ENOTFOUND',
  'EAI_AGAIN',
  'EAI_FAIL',
  'EAI_NONAME',
  'EAI_NODATA',
  'ENODATA',
  'ESERVFAIL',
  'EREFUSED',
  'ETIMEOUT',
  'EBADNAME',
  'EBADRESP',
  'EFORMERR',
  'ENONAME',
  'EBADFAMILY',
  'NO_ADDRESS',
]);

/** OpenSSL verification codes in plain words (Node's own texts, lower-cased where they shout). */
const TLS_TEXT: Record<string, string> = {
  DEPTH_ZERO_SELF_SIGNED_CERT: 'self-signed certificate',
  SELF_SIGNED_CERT_IN_CHAIN: 'self-signed certificate in certificate chain',
  CERT_HAS_EXPIRED: 'certificate has expired',
  CERT_NOT_YET_VALID: 'certificate is not yet valid',
  UNABLE_TO_VERIFY_LEAF_SIGNATURE: 'unable to verify the first certificate',
  UNABLE_TO_GET_ISSUER_CERT: 'unable to get issuer certificate',
  UNABLE_TO_GET_ISSUER_CERT_LOCALLY: 'unable to get local issuer certificate',
  CERT_REVOKED: 'certificate revoked',
  CERT_UNTRUSTED: 'certificate not trusted',
  CERT_SIGNATURE_FAILURE: 'certificate signature failure',
  INVALID_CA: 'invalid CA certificate',
  ERR_TLS_CERT_ALTNAME_INVALID: 'certificate does not match the host name',
  HOSTNAME_MISMATCH: 'certificate does not match the host name',
};

/** The words for a TLS verification code such as `CERT_HAS_EXPIRED`. */
export function tlsErrorText(code: string): string {
  return TLS_TEXT[code] ?? code.toLowerCase().replaceAll('_', ' ');
}

/** `TLS error: self-signed certificate (DEPTH_ZERO_SELF_SIGNED_CERT)` */
export function tlsVerificationError(code: string): TargetError {
  return new TargetError(code, `TLS error: ${tlsErrorText(code)} (${code})`);
}

export function timeoutMessage(timeoutMs: number, phase: RequestPhase): string {
  return `Timed out after ${Math.round(timeoutMs)} ms while ${PHASE_WORDS[phase]}`;
}

export const CANCELLED = 'cancelled';

function codeOf(err: unknown): string | undefined {
  if (typeof err === 'object' && err !== null && 'code' in err && typeof err.code === 'string') return err.code;
  return undefined;
}

function messageOf(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

function hostPort(c: ErrorContext): string {
  const a = c.address ?? c.host;
  return a.includes(':') ? `[${a}]:${c.port}` : `${a}:${c.port}`;
}

/**
 * Whether an error is something the target or the network did (so the run is a failed check), as
 * opposed to a bug in the agent. Node and undici tag every I/O error with a `code`; a plain
 * TypeError or ReferenceError without one is ours, and the runner lets it propagate.
 */
export function isTargetError(err: unknown): boolean {
  if (err instanceof TargetError) return true;
  const code = codeOf(err);
  return code !== undefined;
}

/**
 * Turns an error from DNS, the socket, TLS or undici into one sentence. Aborts (timeout, cancel) are
 * not handled here: the runner knows which of the two it was and says so itself.
 */
export function describeRequestError(err: unknown, c: ErrorContext): string {
  if (err instanceof TargetError) return err.message;
  const code = codeOf(err) ?? '';
  const cause = typeof err === 'object' && err !== null && 'cause' in err ? err.cause : undefined;
  // undici wraps socket errors (e.g. "other side closed") in its own; the cause has the real code.
  if (code === 'UND_ERR_SOCKET' && cause && codeOf(cause)) return describeRequestError(cause, c);

  if (DNS_CODES.has(code) || (c.phase === 'dns' && code !== '')) {
    return `DNS failure: could not resolve "${c.host}" (${code || 'no address'})`;
  }
  // EINVAL is a blackhole route only when connecting; elsewhere it is an ordinary error.
  if (isNoRouteCode(code) && (code !== 'EINVAL' || c.phase === 'connect')) {
    return noRouteMessage(c.host, [{ where: hostPort(c), code }]);
  }
  switch (code) {
    case 'ECONNREFUSED':
      return `Connection refused by ${hostPort(c)}`;
    case 'ECONNRESET':
      return 'Connection reset';
    case 'EPIPE':
      return 'Connection closed by the server while sending the request (EPIPE)';
    case 'UND_ERR_SOCKET':
      return c.phase === 'body'
        ? 'Connection closed by the server before the response body was complete'
        : 'Connection closed by the server before it sent a response';
    case 'ETIMEDOUT':
      return `Connection to ${hostPort(c)} timed out (ETIMEDOUT)`;
    case 'UND_ERR_HEADERS_OVERFLOW':
      return 'Invalid HTTP response: headers too large';
    case 'UND_ERR_RESPONSE_STATUS_CODE':
    case 'UND_ERR_INFO':
      return `Invalid HTTP response: ${messageOf(err)}`;
    case 'ERR_INVALID_URL':
      return `Invalid URL: ${messageOf(err)}`;
    case 'ERR_INVALID_CHAR':
    case 'ERR_INVALID_HTTP_TOKEN':
    case 'UND_ERR_INVALID_ARG':
      return `Invalid request: ${messageOf(err)}`;
  }
  if (code.startsWith('HPE_')) return `Invalid HTTP response from ${hostPort(c)}: ${messageOf(err)} (${code})`;
  if (code.startsWith('ERR_SSL') || code.startsWith('ERR_TLS') || c.phase === 'tls') {
    // OpenSSL's messages carry library names and source paths ("...:SSL routines::wrong version
    // number:../deps/openssl/...c:77:"); keep the reason only.
    const text =
      TLS_TEXT[code] ??
      (code.startsWith('ERR_SSL_')
        ? code.slice('ERR_SSL_'.length).toLowerCase().replaceAll('_', ' ')
        : (
            messageOf(err)
              .replace(/^.*routines:[^:]*:/, '')
              .split(':')[0] ?? ''
          ).trim() || messageOf(err));
    const hint = /wrong version number|packet length too long|http request/.test(text)
      ? ' — the server does not seem to speak TLS on this port'
      : '';
    return `TLS error: ${text}${hint}${code ? ` (${code})` : ''}`;
  }
  if (TLS_TEXT[code]) return `TLS error: ${TLS_TEXT[code]} (${code})`;
  return code ? `Request failed: ${messageOf(err)} (${code})` : `Request failed: ${messageOf(err)}`;
}
