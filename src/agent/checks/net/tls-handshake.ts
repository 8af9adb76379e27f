/**
 * A TLS handshake over an already connected socket, for the checks that speak TLS themselves (SSL
 * monitors, TCP checks with `request.tls`), and the judgement of the peer's certificate.
 *
 * The handshake runs with verification off so that an untrusted or misnamed certificate can still be
 * read and reported; the chain (OpenSSL's verify result, which Node keeps in `authorizationError`) and
 * the host name (tls.checkServerIdentity) are judged afterwards by peerTrust, and the caller decides
 * whether that fails the run.
 */
import net from 'node:net';
import tls from 'node:tls';
import { TargetError } from '../api/errors.ts';

/** The name sent in SNI and checked against the certificate: `serverName`, else the host (no brackets). */
export function tlsNameOf(hostname: string, serverName: string | null | undefined): string {
  const host = hostname.startsWith('[') && hostname.endsWith(']') ? hostname.slice(1, -1) : hostname;
  return serverName || host;
}

/**
 * The handshake over `raw` with SNI `name` (none for an IP address), within `timeoutMs` when given
 * (else only the run's signal bounds it). A handshake timeout is a TargetError coded HANDSHAKE_TIMEOUT.
 */
export function tlsHandshake(
  raw: net.Socket,
  name: string,
  signal: AbortSignal,
  timeoutMs?: number,
  /** A check's own CAs and client certificate (api/tls.ts tlsOptionsOf), if any. */
  extra: tls.ConnectionOptions = {},
): Promise<tls.TLSSocket> {
  // SNI carries host names only (RFC 6066); an IP address is sent without it.
  const servername = net.isIP(name) === 0 ? name : undefined;
  const socket = tls.connect({
    ...extra,
    socket: raw,
    servername,
    rejectUnauthorized: false,
    checkServerIdentity: () => undefined,
  });
  return new Promise<tls.TLSSocket>((resolve, reject) => {
    const fail = (err: unknown): void => {
      cleanup();
      socket.destroy();
      reject(err);
    };
    const timer =
      timeoutMs === undefined
        ? undefined
        : setTimeout(
            () =>
              fail(
                new TargetError(
                  'HANDSHAKE_TIMEOUT',
                  `TLS handshake did not complete within ${timeoutMs} ms (handshakeTimeoutMs)`,
                ),
              ),
            timeoutMs,
          );
    const onAbort = (): void => fail(signal.reason);
    const cleanup = (): void => {
      clearTimeout(timer);
      signal.removeEventListener('abort', onAbort);
      socket.off('error', fail);
    };
    socket.once('secureConnect', () => {
      cleanup();
      resolve(socket);
    });
    socket.once('error', fail);
    if (signal.aborted) onAbort();
    else signal.addEventListener('abort', onAbort, { once: true });
  });
}

export interface PeerTrust {
  chainTrusted: boolean;
  /** OpenSSL's code for an untrusted chain, else null. */
  chainTrustReason: string | null;
  hostnameVerified: boolean;
  hostnameDetail: string | null;
}

/** Whether the chain is trusted and the certificate is for `name` (checked apart, both reported). */
export function peerTrust(socket: tls.TLSSocket, name: string): PeerTrust {
  const leaf = socket.getPeerCertificate(false);
  // With checkServerIdentity stubbed out, `authorizationError` is OpenSSL's verdict on the chain only.
  const chainTrustReason = socket.authorized ? null : String(socket.authorizationError ?? 'UNKNOWN');
  const identity =
    Object.keys(leaf ?? {}).length > 0 ? tls.checkServerIdentity(name, leaf) : new Error('no certificate');
  return {
    chainTrusted: chainTrustReason === null,
    chainTrustReason,
    hostnameVerified: identity === undefined,
    hostnameDetail: identity === undefined ? null : identity.message,
  };
}
