/**
 * The retry strategy of a group (RetryStrategy | "FALLBACK") and of a check (ChecksV1RetryStrategy),
 * as TypeBox schemas. Kept apart from the group schema so every check type's schema can use it
 * without importing the group's.
 */
import { Type } from 'typebox';
import { RETRY_ONLY_ON, RETRY_STRATEGY_TYPES, type RetryStrategy } from './retry-policy.ts';

export const RetryStrategyObject = Type.Object(
  {
    type: Type.Enum([...RETRY_STRATEGY_TYPES]),
    // No defaults here (Ajv ignores them inside anyOf); resolveStrategy applies them at run time.
    baseBackoffSeconds: Type.Optional(Type.Number({ minimum: 0, maximum: 600 })),
    maxRetries: Type.Optional(Type.Integer({ minimum: 1, maximum: 10 })),
    maxDurationSeconds: Type.Optional(Type.Number({ minimum: 0, maximum: 600 })),
    sameRegion: Type.Optional(Type.Boolean()),
    onlyOn: Type.Optional(Type.Array(Type.Enum([...RETRY_ONLY_ON]), { maxItems: 1, uniqueItems: true })),
  },
  { additionalProperties: false },
);

/**
 * A check's own retryStrategy (ChecksV1RetryStrategy): an object or null. Written as a type list,
 * not anyOf, for the reason given at Nullable.
 */
export const CheckRetryStrategy = Type.Unsafe<RetryStrategy | null>({
  ...RetryStrategyObject,
  type: ['object', 'null'],
});

/**
 * A group's retryStrategy: a strategy object, the literal "FALLBACK" (use each check's own) or null
 * (no retries). The object branch comes first so a bad object is reported by its own field.
 */
export const GroupRetryStrategy = Type.Union([RetryStrategyObject, Type.Literal('FALLBACK'), Type.Null()]);
