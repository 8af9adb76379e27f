/**
 * TypeBox helpers shared by the job protocol's shapes (./*.ts) and the public API's schemas
 * (src/service/checks/), so both build a nullable value the same way.
 */
import { type Static, type TSchema, type TUnsafe, Type } from 'typebox';

/**
 * A value the reference marks `nullable: true`, as a JSON Schema type list (`type: [T, 'null']`,
 * or `null` added to an enum). Not `anyOf [T, null]`: Fastify's Ajv coerces types, and inside
 * anyOf it would turn a null into "" or 0 by the first branch before trying the null one.
 */
export function Nullable<T extends TSchema>(schema: T, options: { default?: unknown } = {}): TUnsafe<Static<T> | null> {
  const raw = schema as Record<string, unknown>;
  if (Array.isArray(raw.enum)) return Type.Unsafe<Static<T> | null>({ ...raw, enum: [...raw.enum, null], ...options });
  if (typeof raw.type !== 'string') throw new Error('Nullable needs a schema with a single type or an enum');
  return Type.Unsafe<Static<T> | null>({ ...raw, type: [raw.type, 'null'], ...options });
}
