/**
 * The tokens of confirm and unsubscribe links: 256 random bits, kept in the database only as their
 * SHA-256 (a copy of the database cannot confirm or unsubscribe anyone). A fast hash is enough: the
 * token is random, not a password, so there is nothing to guess from its hash.
 */
import { createHash, randomBytes } from 'node:crypto';

export function newLinkToken(): string {
  return randomBytes(32).toString('base64url');
}

export function hashLinkToken(token: string): string {
  return createHash('sha256').update(token).digest('hex');
}

/** A token as newLinkToken makes them; anything else is answered like an unknown token, without a lookup. */
export function isWellFormedLinkToken(token: string): boolean {
  return /^[A-Za-z0-9_-]{43}$/.test(token);
}
