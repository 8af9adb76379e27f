/**
 * DATABASE_URL: which database the service keeps its state in. Unset, the embedded SQLite database in
 * DATA_DIR (one service process); a postgres:// or postgresql:// URL, PostgreSQL (any number of replicas).
 */
import { type Env, readOptionalString } from '../shared/env.ts';
import { ConfigError } from '../shared/errors.ts';

export const DATABASE_URL = 'DATABASE_URL';

export type DatabaseConfig = { kind: 'sqlite' } | { kind: 'postgres'; url: string };

const POSTGRES_SCHEMES = new Set(['postgres:', 'postgresql:']);
const ALLOWED = 'a postgres:// or postgresql:// URL (PostgreSQL), or unset (SQLite in DATA_DIR)';

export function loadDatabaseConfig(env: Env): DatabaseConfig {
  const value = readOptionalString(env, DATABASE_URL);
  if (value === undefined) return { kind: 'sqlite' };
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    // The value is not echoed: it may carry a password.
    throw new ConfigError(DATABASE_URL, `${DATABASE_URL} is not a URL; use ${ALLOWED}`);
  }
  if (!POSTGRES_SCHEMES.has(url.protocol)) {
    throw new ConfigError(
      DATABASE_URL,
      `${DATABASE_URL} has the scheme "${url.protocol}", which is not supported; use ${ALLOWED}`,
    );
  }
  return { kind: 'postgres', url: value };
}
