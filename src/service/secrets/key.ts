/**
 * Where the key that encrypts secrets at rest comes from (docs/secrets.md "Key handling"):
 * 1. SECRETS_KEY: base64 of 32 random bytes (e.g. from a secret manager), or else
 * 2. the key file SECRETS_KEY_FILE (default `<DATA_DIR>/outpost-secrets.key`): read if it exists,
 *    otherwise generated once (32 random bytes, base64, mode 0600) on the first start.
 * The key never goes into the database; the database keeps only a sealed marker that tells, at
 * start, whether the key in use is the one that sealed the stored secrets (./marker in the store).
 */
import { randomBytes } from 'node:crypto';
import { closeSync, mkdirSync, openSync, readFileSync, writeSync } from 'node:fs';
import path from 'node:path';
import { type Env, readOptionalString, readString } from '../../shared/env.ts';
import { ConfigError } from '../../shared/errors.ts';

export const KEY_BYTES = 32;
export const DEFAULT_KEY_FILE_NAME = 'outpost-secrets.key';

export interface SecretsKeyConfig {
  /** SECRETS_KEY as given (base64); wins over the file. */
  key?: string;
  /** SECRETS_KEY_FILE, absolute. */
  keyFile: string;
}

/** Reads SECRETS_KEY and SECRETS_KEY_FILE; a malformed SECRETS_KEY is a ConfigError at once. */
export function loadSecretsKeyConfig(env: Env, dataDir: string, cwd: string = process.cwd()): SecretsKeyConfig {
  const key = readOptionalString(env, 'SECRETS_KEY');
  if (key !== undefined) decodeKey(key, 'SECRETS_KEY');
  const keyFile = path.resolve(cwd, readString(env, 'SECRETS_KEY_FILE', path.join(dataDir, DEFAULT_KEY_FILE_NAME)));
  return key === undefined ? { keyFile } : { key, keyFile };
}

export function decodeKey(text: string, setting: string): Buffer {
  const trimmed = text.trim();
  const key = /^[A-Za-z0-9+/_-]+={0,2}$/.test(trimmed) ? Buffer.from(trimmed, 'base64') : Buffer.alloc(0);
  if (key.length !== KEY_BYTES) {
    throw new ConfigError(
      setting,
      `${setting} must be the base64 of ${KEY_BYTES} bytes (e.g. \`openssl rand -base64 32\`); got ${key.length} bytes`,
    );
  }
  return key;
}

/** The configuration without SECRETS_KEY / SECRETS_KEY_FILE: the key file beside the database. */
export function defaultSecretsKeyConfig(dataDir: string): SecretsKeyConfig {
  return { keyFile: path.join(dataDir, DEFAULT_KEY_FILE_NAME) };
}

/** Where a configuration's key comes from, as errors name it: the setting, and the words for it. */
export interface SecretsKeySource {
  setting: 'SECRETS_KEY' | 'SECRETS_KEY_FILE';
  description: string;
}

export function secretsKeySourceOf(config: SecretsKeyConfig): SecretsKeySource {
  return config.key !== undefined
    ? { setting: 'SECRETS_KEY', description: 'SECRETS_KEY' }
    : { setting: 'SECRETS_KEY_FILE', description: `the key file ${config.keyFile}` };
}

/** The key to use: SECRETS_KEY, else the key file, created with a new random key if absent. */
export function loadSecretsKey(config: SecretsKeyConfig): Buffer {
  if (config.key !== undefined) return decodeKey(config.key, 'SECRETS_KEY');
  const existing = readKeyFile(config.keyFile);
  if (existing) return existing;
  const key = randomBytes(KEY_BYTES);
  try {
    mkdirSync(path.dirname(config.keyFile), { recursive: true, mode: 0o700 });
    // 'wx': never overwrite. Two processes starting at once: the loser reads the winner's key.
    const fd = openSync(config.keyFile, 'wx', 0o600);
    try {
      writeSync(fd, `${key.toString('base64')}\n`);
    } finally {
      closeSync(fd);
    }
    return key;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'EEXIST') {
      const raced = readKeyFile(config.keyFile);
      if (raced) return raced;
    }
    throw new ConfigError(
      'SECRETS_KEY_FILE',
      `SECRETS_KEY_FILE=${config.keyFile}: cannot create the secrets key file (${(err as Error).message}); set SECRETS_KEY or a writable SECRETS_KEY_FILE`,
    );
  }
}

function readKeyFile(file: string): Buffer | undefined {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw new ConfigError(
      'SECRETS_KEY_FILE',
      `SECRETS_KEY_FILE=${file}: cannot read the secrets key (${(err as Error).message})`,
    );
  }
  if (text.trim() === '') {
    throw new ConfigError(
      'SECRETS_KEY_FILE',
      `SECRETS_KEY_FILE=${file} is empty; restore the key it held, or set SECRETS_KEY`,
    );
  }
  return decodeKey(text, `SECRETS_KEY_FILE (${file})`);
}
