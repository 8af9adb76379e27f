/**
 * What an SSL monitor reports about the certificates a server presented: the chain as Node received
 * it (leaf first), each certificate read through node:crypto's X509Certificate for the fields the
 * legacy object lacks (signature algorithm, key type).
 */
import { X509Certificate } from 'node:crypto';
import type { DetailedPeerCertificate, TLSSocket } from 'node:tls';
import type { SslCertificateInfo } from '../../../shared/checks/monitors.ts';

const DAY_MS = 86_400_000;

function firstOf(v: string | string[] | undefined): string | null {
  if (v === undefined) return null;
  return Array.isArray(v) ? (v[0] ?? null) : v;
}

/** `CN=a, O=b` from Node's parsed name object. */
function nameText(name: Record<string, string | string[]> | undefined): string {
  return Object.entries(name ?? {})
    .map(([k, v]) => `${k}=${Array.isArray(v) ? v.join('+') : v}`)
    .join(', ');
}

const KEY_ALGORITHMS: Record<string, string> = {
  rsa: 'RSA',
  'rsa-pss': 'RSA-PSS',
  ec: 'ECDSA',
  ed25519: 'Ed25519',
  ed448: 'Ed448',
  dsa: 'DSA',
};

/** Whole days until `validTo` (negative once expired), as the API check's tls details count them. */
export function daysUntil(validTo: string | null, now: number): number | null {
  return validTo === null ? null : Math.floor((Date.parse(validTo) - now) / DAY_MS);
}

function describeOne(cert: DetailedPeerCertificate, now: number): SslCertificateInfo {
  const x509 = new X509Certificate(cert.raw);
  const validTo = x509.validToDate.toISOString();
  const key = x509.publicKey;
  // Bare names and addresses (`example.com`, `10.0.0.1`), so `sans CONTAINS example.com` reads naturally.
  const sans = (x509.subjectAltName ?? '')
    .split(', ')
    .filter((s) => s !== '')
    .map((s) => s.replace(/^(DNS|IP Address):/, ''));
  return {
    subjectCN: firstOf(cert.subject?.CN),
    subject: nameText(cert.subject as unknown as Record<string, string>),
    issuerCN: firstOf(cert.issuer?.CN),
    issuer: nameText(cert.issuer as unknown as Record<string, string>),
    serialNumber: cert.serialNumber ?? null,
    validFrom: x509.validFromDate.toISOString(),
    validTo,
    daysUntilExpiry: daysUntil(validTo, now),
    fingerprintSha256: cert.fingerprint256 ?? null,
    keyAlgorithm: KEY_ALGORITHMS[key.asymmetricKeyType ?? ''] ?? key.asymmetricKeyType ?? null,
    keySizeBits: typeof cert.bits === 'number' ? cert.bits : (key.asymmetricKeyDetails?.modulusLength ?? null),
    signatureAlgorithm: x509.signatureAlgorithm ?? null,
    sans,
    selfSigned: x509.checkIssued(x509) && x509.verify(key),
    isCA: x509.ca,
  };
}

/**
 * The chain the server sent, leaf first. Node links each certificate to its issuer when the issuer
 * was sent (or is a root it knows); a self-signed root links to itself, where the walk stops.
 */
export function describeChain(socket: TLSSocket, now: number = Date.now()): SslCertificateInfo[] {
  const chain: SslCertificateInfo[] = [];
  const seen = new Set<string>();
  let cert: DetailedPeerCertificate | undefined = socket.getPeerCertificate(true);
  while (cert && Object.keys(cert).length > 0 && cert.raw && !seen.has(cert.fingerprint256)) {
    seen.add(cert.fingerprint256);
    chain.push(describeOne(cert, now));
    cert = cert.issuerCertificate;
  }
  return chain;
}
