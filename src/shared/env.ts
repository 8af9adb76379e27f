import { ConfigError } from './errors.ts';

/**
 * Small readers for environment variables. Every bad value becomes a ConfigError
 * that names the variable and what is allowed, so the CLI can print one line and exit 2.
 * Empty strings count as unset: `FOO=` in a compose file should mean "default".
 */
export type Env = Record<string, string | undefined>;

function raw(env: Env, name: string): string | undefined {
  const value = env[name];
  return value === undefined || value.trim() === '' ? undefined : value.trim();
}

export function readString(env: Env, name: string, fallback: string): string {
  return raw(env, name) ?? fallback;
}

export function readOptionalString(env: Env, name: string): string | undefined {
  return raw(env, name);
}

export function readRequiredString(env: Env, name: string, hint: string): string {
  const value = raw(env, name);
  if (value === undefined) throw new ConfigError(name, `${name} is required: ${hint}`);
  return value;
}

export function readInteger(
  env: Env,
  name: string,
  fallback: number,
  { min, max }: { min: number; max: number },
): number {
  const value = raw(env, name);
  if (value === undefined) return fallback;
  if (!/^-?\d+$/.test(value)) {
    throw new ConfigError(
      name,
      `${name}=${JSON.stringify(value)} is not a whole number; use an integer from ${min} to ${max}`,
    );
  }
  const n = Number(value);
  if (n < min || n > max) {
    throw new ConfigError(name, `${name}=${n} is out of range; use an integer from ${min} to ${max}`);
  }
  return n;
}

export function readEnum<T extends string>(env: Env, name: string, fallback: T, allowed: readonly T[]): T {
  const value = raw(env, name);
  if (value === undefined) return fallback;
  const match = allowed.find((a) => a.toLowerCase() === value.toLowerCase());
  if (!match) {
    throw new ConfigError(name, `${name}=${JSON.stringify(value)} is not allowed; use one of ${allowed.join(', ')}`);
  }
  return match;
}

/** Booleans accept true/false, 1/0, on/off, yes/no (any case). */
export function readBoolean(env: Env, name: string, fallback: boolean): boolean {
  const value = raw(env, name);
  if (value === undefined) return fallback;
  const v = value.toLowerCase();
  if (['true', '1', 'on', 'yes'].includes(v)) return true;
  if (['false', '0', 'off', 'no'].includes(v)) return false;
  throw new ConfigError(
    name,
    `${name}=${JSON.stringify(value)} is not a boolean; use true or false (also on/off, 1/0)`,
  );
}

export function readUrl(env: Env, name: string, fallback: string): URL {
  const value = raw(env, name) ?? fallback;
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new ConfigError(
      name,
      `${name}=${JSON.stringify(value)} is not a URL; use a full URL such as http://localhost:8080`,
    );
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new ConfigError(name, `${name}=${JSON.stringify(value)} must start with http:// or https://`);
  }
  return url;
}
