/** What the agent reports about the certificate of an https target. */
import type { TLSSocket } from 'node:tls';
import type { ApiTlsDetails } from '../../../shared/checks/types.ts';

const DAY_MS = 86_400_000;

function firstOf(v: string | string[] | undefined): string | null {
  if (v === undefined) return null;
  return Array.isArray(v) ? (v[0] ?? null) : v;
}

function isoDate(s: string | undefined): string | null {
  if (!s) return null;
  const d = new Date(s);
  return Number.isNaN(d.getTime()) ? null : d.toISOString();
}

/**
 * Reads the peer certificate of a connected TLS socket. Called right at 'secureConnect', before the
 * agent decides whether it trusts the certificate, so the details are there even when the run then
 * fails on verification, and when skipSSL lets a bad certificate through.
 */
export function describeCertificate(socket: TLSSocket, now: number = Date.now()): ApiTlsDetails | null {
  const cert = socket.getPeerCertificate(false);
  // An empty object means the server sent no certificate (not possible for the ciphers Node allows).
  if (!cert || Object.keys(cert).length === 0) return null;
  const validTo = isoDate(cert.valid_to);
  const cipher = socket.getCipher();
  return {
    subjectCN: firstOf(cert.subject?.CN),
    issuerCN: firstOf(cert.issuer?.CN),
    validFrom: isoDate(cert.valid_from),
    validTo,
    daysRemaining: validTo === null ? null : Math.floor((Date.parse(validTo) - now) / DAY_MS),
    fingerprint256: cert.fingerprint256 ?? null,
    authorized: socket.authorized,
    authorizationError: socket.authorized ? null : String(socket.authorizationError ?? 'UNKNOWN'),
    protocol: socket.getProtocol(),
    cipher: cipher?.name ?? null,
  };
}
