/**
 * Authenticated encryption of secret values at rest: AES-256-GCM with a fresh 96-bit IV per value.
 * A sealed value is one string, so it fits wherever the plain value was stored (a JSON body, a TEXT
 * column): `enc:v1:<key id>:<base64url(iv ‖ tag ‖ ciphertext)>`. The key id (8 hex digits of the
 * key's SHA-256) lets a wrong key be told apart from a corrupted value.
 *
 * The key is loaded lazily: a process that never touches a secret (e.g. `outpost account create`)
 * never reads or creates the key file. See ./key.ts for where the key comes from.
 */
import { createCipheriv, createDecipheriv, createHash, randomBytes } from 'node:crypto';

export const SEALED_PREFIX = 'enc:v1:';
const IV_BYTES = 12;
const TAG_BYTES = 16;

/** A sealed value this key cannot open: another key sealed it, or it was altered. */
export class SecretDecryptError extends Error {
  override readonly name = 'SecretDecryptError';
}

export function keyIdOf(key: Buffer): string {
  return createHash('sha256').update(key).digest('hex').slice(0, 8);
}

export function isSealed(value: unknown): value is string {
  return typeof value === 'string' && value.startsWith(SEALED_PREFIX);
}

export class SecretBox {
  readonly #load: () => Buffer;
  #key: Buffer | undefined;
  #keyId: string | undefined;

  /** `key` may be a function: it is called once, on the first seal or open (or `ready()`). */
  constructor(key: Buffer | (() => Buffer)) {
    this.#load = typeof key === 'function' ? key : () => key;
  }

  /** Loads the key now (and runs whatever check the loader does); throws what the loader throws. */
  ready(): void {
    this.#ensure();
  }

  get keyId(): string {
    this.#ensure();
    return this.#keyId as string;
  }

  seal(plain: string): string {
    const key = this.#ensure();
    const iv = randomBytes(IV_BYTES);
    const cipher = createCipheriv('aes-256-gcm', key, iv);
    const ct = Buffer.concat([cipher.update(plain, 'utf8'), cipher.final()]);
    const blob = Buffer.concat([iv, cipher.getAuthTag(), ct]).toString('base64url');
    return `${SEALED_PREFIX}${this.#keyId}:${blob}`;
  }

  open(sealed: string): string {
    const key = this.#ensure();
    if (!isSealed(sealed)) throw new SecretDecryptError('the value is not a sealed secret');
    const rest = sealed.slice(SEALED_PREFIX.length);
    const colon = rest.indexOf(':');
    const keyId = rest.slice(0, colon);
    if (colon < 0 || keyId !== this.#keyId) {
      throw new SecretDecryptError(`the value was sealed with key ${keyId || '?'}, the key in use is ${this.#keyId}`);
    }
    const blob = Buffer.from(rest.slice(colon + 1), 'base64url');
    if (blob.length < IV_BYTES + TAG_BYTES) throw new SecretDecryptError('the sealed value is truncated');
    try {
      const decipher = createDecipheriv('aes-256-gcm', key, blob.subarray(0, IV_BYTES));
      decipher.setAuthTag(blob.subarray(IV_BYTES, IV_BYTES + TAG_BYTES));
      return Buffer.concat([decipher.update(blob.subarray(IV_BYTES + TAG_BYTES)), decipher.final()]).toString('utf8');
    } catch {
      throw new SecretDecryptError(
        `the sealed value does not authenticate under key ${this.#keyId} (altered or corrupt)`,
      );
    }
  }

  #ensure(): Buffer {
    if (!this.#key) {
      const key = this.#load();
      if (key.length !== 32) throw new Error(`a secrets key is 32 bytes, got ${key.length}`);
      this.#key = key;
      this.#keyId = keyIdOf(key);
    }
    return this.#key;
  }
}
