/**
 * Schemas shared by the public API routes. Written with TypeBox so the same objects validate
 * requests, serialize responses and (later) feed @fastify/swagger for /openapi.json.
 */
import { type Static, type TSchema, type TUnsafe, Type } from 'typebox';

/** The reference's ApiError: the body of every error response. */
export const ApiErrorSchema = Type.Object({ statusCode: Type.Number(), error: Type.String(), message: Type.String() });

/** Error responses every authenticated route can give. */
export const commonErrors = {
  400: ApiErrorSchema,
  401: ApiErrorSchema,
  404: ApiErrorSchema,
} as const;

/** 204 responses have no body; declared so the route types (and the OpenAPI document) say so. */
export const NoContent = Type.Null({ description: 'No content' });

export const IdParams = Type.Object({ id: Type.String({ minLength: 1 }) });

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
