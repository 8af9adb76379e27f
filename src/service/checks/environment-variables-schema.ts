/**
 * The environment variable item of check and group bodies (the reference's ChecksV1EnvironmentVariable
 * on create, ChecksV1EnvironmentVariablePatch on update) and the key rule shared with /v1/variables.
 * Check groups use the same item (check-group-schema.ts), so a variable reads the same everywhere.
 */
import { Type } from 'typebox';
import { BadRequestError } from '../http/errors.ts';
import { Nullable } from '../routes/schemas.ts';

/**
 * Keys become process.env names in user scripts, so they are what a shell accepts as a name: a
 * letter or underscore, then letters, digits and underscores (the reference only says minLength 1).
 */
export const VARIABLE_KEY_PATTERN = '^[A-Za-z_][A-Za-z0-9_]*$';
export const VARIABLE_KEY_MAX = 255;
export const VARIABLE_VALUE_MAX = 100_000;
export const VARIABLES_MAX_ITEMS = 200;

export const VariableKey = Type.String({ minLength: 1, maxLength: VARIABLE_KEY_MAX, pattern: VARIABLE_KEY_PATTERN });

/**
 * One item. `value` may be null only to mean "keep the stored secret value of this key" (what a
 * client sends back after GET, which returns secret values as null); see resolveVariableList.
 */
export function environmentVariableItem(mode: 'create' | 'update') {
  // No defaults on update: an omitted `secret` must not read as "make it non-secret".
  const flag = () => (mode === 'create' ? Type.Boolean({ default: false }) : Type.Optional(Type.Boolean()));
  return Type.Object(
    {
      key: VariableKey,
      value: Nullable(Type.String({ maxLength: VARIABLE_VALUE_MAX })),
      locked: flag(),
      secret: flag(),
    },
    { additionalProperties: false },
  );
}

/** The `environmentVariables` property of a check or group body (null reads as none). */
export function environmentVariableList(mode: 'create' | 'update') {
  return Type.Array(environmentVariableItem(mode), { maxItems: VARIABLES_MAX_ITEMS });
}

/** As GET returns an item: secret values as null. */
export const EnvironmentVariableItemResponse = Type.Object({
  key: Type.String(),
  value: Nullable(Type.String()),
  locked: Type.Boolean(),
  secret: Type.Boolean(),
});

export interface StoredVariable {
  key: string;
  value: string;
  locked: boolean;
  secret: boolean;
}

/**
 * The list to store from a body's list and the stored one (none on create): keys unique; a null
 * value keeps the stored secret value of that key (and only a secret's: anything else has no value
 * to keep); a secret stays secret ("once set, it cannot be unset", as the reference says).
 * `field` names the property in errors, e.g. `body/environmentVariables`.
 */
export function resolveVariableList(
  field: string,
  given: ReadonlyArray<{ key: string; value: string | null; locked?: boolean; secret?: boolean }> | null | undefined,
  stored: readonly StoredVariable[] = [],
): StoredVariable[] {
  const seen = new Set<string>();
  return (given ?? []).map((v, i) => {
    if (seen.has(v.key))
      throw new BadRequestError(`${field}/${i}/key: "${v.key}" is given more than once; keys must be unique`);
    seen.add(v.key);
    const old = stored.find((s) => s.key === v.key);
    if (old?.secret && v.secret === false) {
      throw new BadRequestError(
        `${field}/${i}/secret: "${v.key}" is secret and cannot be made non-secret; remove it and add it again`,
      );
    }
    const secret = v.secret === true || old?.secret === true;
    if (v.value === null) {
      if (!old?.secret)
        throw new BadRequestError(
          `${field}/${i}/value must be a string (null only keeps the value of a stored secret)`,
        );
      return { key: v.key, value: old.value, locked: v.locked ?? old.locked, secret: true };
    }
    return { key: v.key, value: v.value, locked: v.locked ?? false, secret };
  });
}
