/**
 * A check's own TLS material (docs/api.md "Client certificates"): the client certificate it presents
 * for mutual TLS and the extra CAs it trusts. API checks and URL monitors take
 * `request.sslClientCertificateId` (explicit) and otherwise use the newest certificate of the account
 * whose `host` matches the URL's host (the reference's automatic matching); SSL monitors follow the
 * reference's `sslConfig.clientCertificateMode` ('auto' matches sslConfig.hostname, 'explicit' takes
 * the id). `request.sslCaBundle` (an Outpost extension) adds PEM CAs to the agent's trusted roots for
 * that check only.
 *
 * The certificate's key and passphrase go into the run's snapshot still sealed (copied, never opened
 * here); toJob opens them for the agent that leases the run (openTlsIn).
 */
import { createPrivateKey, type KeyObject, X509Certificate } from 'node:crypto';
import { type TSchema, Type } from 'typebox';
import type { CheckDefinition, CheckTlsMaterial } from '../../shared/checks/types.ts';
import { BadRequestError } from '../http/errors.ts';
import { Nullable } from '../routes/schemas.ts';
import { isSealed, type SecretBox } from '../secrets/box.ts';
import type { ClientCertificateRepo, SealedClientCertificate } from '../store/client-certificate-types.ts';
import type { StoredCheck } from '../store/store.ts';

export const PEM_TEXT_MAX = 200_000;

/** The request properties API checks, URL and SSL monitors take (both optional, null means none). */
export function clientTlsRequestProperties(): Record<string, TSchema> {
  return {
    sslClientCertificateId: Type.Optional(Nullable(Type.String({ minLength: 1, maxLength: 64 }))),
    sslCaBundle: Type.Optional(Nullable(Type.String({ maxLength: PEM_TEXT_MAX }))),
  };
}

const PEM_BLOCK = /-----BEGIN ([A-Z0-9 ]+)-----[\s\S]*?-----END \1-----/g;

function pemBlocks(text: string): Array<{ label: string; pem: string }> {
  return [...text.matchAll(PEM_BLOCK)].map((m) => ({ label: m[1] ?? '', pem: m[0] }));
}

/** Every CERTIFICATE block of `text` parsed; none, or one that does not parse, is a 400 naming `field`. */
export function parseCertificates(field: string, text: string): X509Certificate[] {
  const blocks = pemBlocks(text).filter((b) => b.label === 'CERTIFICATE');
  if (blocks.length === 0)
    throw new BadRequestError(`${field} must hold one or more PEM certificates (-----BEGIN CERTIFICATE-----)`);
  return blocks.map((b, i) => {
    try {
      return new X509Certificate(b.pem);
    } catch (err) {
      throw new BadRequestError(`${field}: certificate ${i + 1} does not parse (${(err as Error).message})`);
    }
  });
}

function parseKey(key: string, passphrase: string | null): KeyObject {
  const block = pemBlocks(key).find((b) => b.label.endsWith('PRIVATE KEY'));
  if (!block) throw new BadRequestError('body/key must be a PEM private key (-----BEGIN PRIVATE KEY----- or similar)');
  const encrypted = block.label === 'ENCRYPTED PRIVATE KEY' || /Proc-Type: 4,ENCRYPTED/.test(block.pem);
  if (encrypted && !passphrase) throw new BadRequestError('body/passphrase is required: the private key is encrypted');
  try {
    return createPrivateKey({ key: block.pem, format: 'pem', ...(passphrase ? { passphrase } : {}) });
  } catch (err) {
    const field = encrypted ? 'body/passphrase' : 'body/key';
    throw new BadRequestError(
      `${field}: the private key cannot be read (${encrypted ? 'wrong passphrase?' : (err as Error).message})`,
    );
  }
}

/** A host pattern: a name without scheme, port or path; `*` stands for any run of characters. */
const HOST_PATTERN = /^[A-Za-z0-9*]([A-Za-z0-9*.-]*[A-Za-z0-9*])?$|^\[?[0-9A-Fa-f:.]+\]?$/;

/** What POST /v1/client-certificates checks beyond the schema: host, PEM, and that cert and key pair. */
export function assertClientCertificateUsable(b: {
  host: string;
  cert: string;
  key: string;
  ca: string | null;
  passphrase: string | null;
}): void {
  if (!HOST_PATTERN.test(b.host)) {
    throw new BadRequestError(
      'body/host must be a host name without https:// or a path, e.g. "www.acme.com" or "*.acme.com"',
    );
  }
  const [leaf] = parseCertificates('body/cert', b.cert);
  if (b.ca !== null && b.ca !== '') parseCertificates('body/ca', b.ca);
  const key = parseKey(b.key, b.passphrase);
  if (!leaf?.checkPrivateKey(key))
    throw new BadRequestError('body/key does not match body/cert (the first certificate)');
}

/** Whether `host` matches the pattern, case-insensitively; `*` matches any run of characters, dots included (as minimatch does in the reference). */
export function hostMatches(pattern: string, host: string): boolean {
  const source = pattern
    .toLowerCase()
    .split('*')
    .map((part) => part.replace(/[.?+^$|()[\]{}\\]/g, '\\$&'))
    .join('.*');
  return new RegExp(`^${source}$`).test(host.toLowerCase().replace(/^\[|\]$/g, ''));
}

/** The reference's rule: an exact host beats a wildcard; among equals the newest wins (`certs` come newest first). */
export function pickCertificate<C extends { host: string }>(certs: readonly C[], host: string): C | undefined {
  const matching = certs.filter((c) => hostMatches(c.host, host));
  return matching.find((c) => !c.host.includes('*')) ?? matching[0];
}

interface TlsRequestFields {
  url?: unknown;
  sslClientCertificateId?: unknown;
  sslCaBundle?: unknown;
  sslConfig?: { hostname?: unknown; clientCertificateMode?: unknown };
}

const ID_FIELD = 'body/request/sslClientCertificateId';

/**
 * What a check write checks beyond the schema: the certificate id names one of the account's
 * certificates (another account's reads as none: a 400 naming the field, never a hint it exists),
 * an SSL monitor in 'explicit' mode names one, and the CA bundle parses.
 */
export async function assertClientTlsUsable(
  repo: Pick<ClientCertificateRepo, 'get'>,
  accountId: string,
  body: Readonly<Record<string, unknown>>,
): Promise<void> {
  const req = (body.request ?? {}) as TlsRequestFields;
  const id = req.sslClientCertificateId ?? null;
  if (id !== null && (typeof id !== 'string' || !(await repo.get(accountId, id)))) {
    throw new BadRequestError(`${ID_FIELD}: no client certificate with id ${JSON.stringify(id)} in this account`);
  }
  if (req.sslConfig?.clientCertificateMode === 'explicit' && id === null) {
    throw new BadRequestError(`${ID_FIELD} is required when request.sslConfig.clientCertificateMode is "explicit"`);
  }
  if (typeof req.sslCaBundle === 'string' && req.sslCaBundle.trim() !== '')
    parseCertificates('body/request/sslCaBundle', req.sslCaBundle);
}

/** The host a check connects to, for automatic matching; null when there is none to match (no https, a {{variable}} host). */
function autoMatchHost(def: CheckDefinition, req: TlsRequestFields): string | null {
  if (def.checkType === 'SSL') {
    const host = (def.request as { sslConfig: { hostname: string } }).sslConfig.hostname;
    return req.sslConfig?.clientCertificateMode === 'auto' ? host : null;
  }
  const url = 'request' in def ? (def.request as { url?: unknown }).url : undefined;
  if (typeof url !== 'string' || !/^https:\/\//i.test(url) || url.includes('{{')) return null;
  try {
    return new URL(url).hostname;
  } catch {
    return null;
  }
}

/** What clientTlsOf reads: the account's certificates, sealed. */
export type CertificateReads = Pick<ClientCertificateRepo, 'listSealed'>;

/** One read of an account's certificates per scheduler batch, however many of its checks are due. */
export function certificatesOncePerBatch(repo: CertificateReads): CertificateReads {
  const seen = new Map<string, Promise<SealedClientCertificate[]>>();
  return {
    listSealed(accountId) {
      let found = seen.get(accountId);
      if (!found) {
        found = repo.listSealed(accountId);
        seen.set(accountId, found);
        // A failed read is not kept: the next check of the batch tries again.
        found.catch(() => seen.delete(accountId));
      }
      return found;
    },
  };
}

/**
 * The TLS material of a run of `stored` (built as `def`, its group's base URL applied), or undefined.
 * An explicit id whose certificate was deleted since leaves the run without one: the target then
 * refuses the handshake, as the reference says checks needing a deleted certificate "start failing".
 */
export async function clientTlsOf(
  repo: CertificateReads,
  stored: StoredCheck,
  def: CheckDefinition,
): Promise<CheckTlsMaterial | undefined> {
  if (def.checkType !== 'API' && def.checkType !== 'URL' && def.checkType !== 'SSL') return undefined;
  const req = (stored.body.request ?? {}) as TlsRequestFields;
  const id = typeof req.sslClientCertificateId === 'string' ? req.sslClientCertificateId : null;
  const host = id === null ? autoMatchHost(def, req) : null;
  const certs: SealedClientCertificate[] = id !== null || host !== null ? await repo.listSealed(stored.accountId) : [];
  const chosen =
    id !== null ? certs.find((c) => c.id === id) : host !== null ? pickCertificate(certs, host) : undefined;
  const ca = [
    ...(typeof req.sslCaBundle === 'string' ? pemBlocks(req.sslCaBundle) : []),
    ...(chosen?.ca ? pemBlocks(chosen.ca) : []),
  ]
    .filter((b) => b.label === 'CERTIFICATE')
    .map((b) => b.pem);
  if (!chosen && ca.length === 0) return undefined;
  const material: CheckTlsMaterial = {};
  if (ca.length > 0) material.ca = ca;
  if (chosen) {
    Object.assign(material, {
      cert: chosen.cert,
      key: chosen.sealedKey,
      passphrase: chosen.sealedPassphrase,
      clientCertificateId: chosen.id,
    });
  }
  return material;
}

/** A copy of a job's check with its TLS key and passphrase opened, for the agent that leased it. */
export function openTlsIn<T extends { tls?: CheckTlsMaterial }>(box: SecretBox, check: T): T {
  const t = check.tls;
  if (!t || (!isSealed(t.key) && !isSealed(t.passphrase))) return check;
  return {
    ...check,
    tls: {
      ...t,
      key: isSealed(t.key) ? box.open(t.key) : t.key,
      passphrase: isSealed(t.passphrase) ? box.open(t.passphrase) : t.passphrase,
    },
  };
}
