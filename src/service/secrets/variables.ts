/**
 * Secret variable values inside stored bodies. Check bodies, group bodies and run snapshots all keep
 * their variables in a top-level `environmentVariables` array of {key, value, secret, ...}; the
 * repositories store those bodies through storedJson/parseStoredJson, so a `secret` value is sealed
 * in the database and plain only in memory. Non-secret values are stored as given: the API returns
 * them anyway.
 *
 * The API never returns a secret value: maskSecretValues replaces it before a body is sent.
 */
import type { SecretBox } from './box.ts';
import { isSealed } from './box.ts';

interface VariableLike {
  key: string;
  value: unknown;
  secret?: unknown;
}

type WithVariables = { environmentVariables?: unknown };

function mapVariables<T>(body: T, fn: (v: VariableLike) => VariableLike): T {
  if (body === null || typeof body !== 'object') return body;
  const vars = (body as WithVariables).environmentVariables;
  if (!Array.isArray(vars) || vars.length === 0) return body;
  return { ...body, environmentVariables: vars.map((v) => (v && typeof v === 'object' ? fn(v as VariableLike) : v)) };
}

/** A copy of `body` with each secret variable's value sealed. */
export function sealSecretsIn<T>(box: SecretBox, body: T): T {
  return mapVariables(body, (v) =>
    v.secret === true && typeof v.value === 'string' ? { ...v, value: box.seal(v.value) } : v,
  );
}

/** A copy of `body` with each sealed secret value opened (a value stored before sealing existed is left as it is). */
export function openSecretsIn<T>(box: SecretBox, body: T): T {
  return mapVariables(body, (v) => (v.secret === true && isSealed(v.value) ? { ...v, value: box.open(v.value) } : v));
}

/** JSON for the database: secret values sealed. */
export function storedJson(box: SecretBox, body: unknown): string {
  return JSON.stringify(sealSecretsIn(box, body));
}

/** The inverse of storedJson. */
export function parseStoredJson<T>(box: SecretBox, json: string): T {
  return openSecretsIn(box, JSON.parse(json) as T);
}

/**
 * What a response shows of a secret value: null, as the reference says ("Secret values are always
 * returned as null"). Non-secret values are returned as stored.
 */
export const SECRET_VALUE_IN_RESPONSES = null;

/** A copy of `body` whose secret variables show no value. */
export function maskSecretValues<T>(body: T, mask: string | null = SECRET_VALUE_IN_RESPONSES): T {
  return mapVariables(body, (v) => (v.secret === true ? { ...v, value: mask } : v));
}
