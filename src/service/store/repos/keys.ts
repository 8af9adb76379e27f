import { createHash, randomBytes } from 'node:crypto';

/** Prefixes tell the two kinds of key apart at a glance (and in secret scanners). */
export const API_KEY_PREFIX = 'op_';
export const LOCATION_KEY_PREFIX = 'pl_';
export const STATUS_PAGE_KEY_PREFIX = 'sp_';

/** A new user API key: `op_` + 32 random bytes, base64url. */
export function newApiKey(): string {
  return API_KEY_PREFIX + randomBytes(32).toString('base64url');
}

/** A new private location key: `pl_` + 32 random bytes, hex (the agent passes it in env files). */
export function newLocationKey(): string {
  return LOCATION_KEY_PREFIX + randomBytes(32).toString('hex');
}

/** A new status page reader key: `sp_` + 32 random bytes, base64url (it travels in a URL once). */
export function newStatusPageKey(): string {
  return STATUS_PAGE_KEY_PREFIX + randomBytes(32).toString('base64url');
}

/**
 * How keys are stored. The keys are 256-bit random tokens, not user-chosen passwords, so there is
 * nothing to brute-force from a hash and a slow password hash (bcrypt, scrypt) would only add
 * latency to every request. A plain SHA-256 is irreversible for such inputs and lets us look a key
 * up by its hash with a unique index, so no key is ever compared byte-by-byte in app code.
 */
export function hashKey(rawKey: string): string {
  return createHash('sha256').update(rawKey, 'utf8').digest('hex');
}

/** `pl_…a1b2`: the prefix and last four characters, enough to tell keys apart, never to use one. */
export function maskKey(rawKey: string): string {
  const prefix = rawKey.slice(0, rawKey.indexOf('_') + 1);
  return `${prefix}…${rawKey.slice(-4)}`;
}
