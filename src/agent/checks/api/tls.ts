/** What the agent reports about the certificate of an https target, and the TLS options of a check's own material. */
import { createHash } from 'node:crypto';
import {
  type ConnectionOptions,
  createSecureContext,
  getCACertificates,
  type SecureContext,
  type TLSSocket,
} from 'node:tls';
import type { ApiTlsDetails, CheckTlsMaterial } from '../../../shared/checks/types.ts';

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

/** Secure contexts of CA bundles (public material only), by bundle: building one parses every default root. */
const CA_CONTEXTS = new Map<string, SecureContext>();
const CA_CONTEXTS_MAX = 64;

function caContext(ca: string[]): SecureContext {
  const id = createHash('sha256').update(ca.join('\n')).digest('hex');
  let context = CA_CONTEXTS.get(id);
  if (!context) {
    context = createSecureContext({ ca: [...getCACertificates('default'), ...ca] });
    // Oldest out first; a bundle in use is put back at the end on its next connection.
    if (CA_CONTEXTS.size >= CA_CONTEXTS_MAX) CA_CONTEXTS.delete(CA_CONTEXTS.keys().next().value as string);
  }
  CA_CONTEXTS.delete(id);
  CA_CONTEXTS.set(id, context);
  return context;
}

/**
 * The tls.connect options for a check's own TLS material: its client certificate and key, and its
 * extra CAs added to (not in place of) the agent's default roots, which include NODE_EXTRA_CA_CERTS.
 * Empty for a check without any, so such checks keep Node's shared default context. A CA-only
 * context is cached (it holds nothing secret); one with a key is built per connection, so the key
 * is not kept beyond the run.
 */
export function tlsOptionsOf(material: CheckTlsMaterial | undefined): ConnectionOptions {
  if (!material) return {};
  const ca = material.ca && material.ca.length > 0 ? material.ca : null;
  if (!(material.cert && material.key)) return ca ? { secureContext: caContext(ca) } : {};
  const options: ConnectionOptions = { cert: material.cert, key: material.key };
  if (material.passphrase) options.passphrase = material.passphrase;
  if (ca) options.ca = [...getCACertificates('default'), ...ca];
  return options;
}
