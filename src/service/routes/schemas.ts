/**
 * Schemas shared by the public API routes. Written with TypeBox so the same objects validate
 * requests, serialize responses and (later) feed @fastify/swagger for /openapi.json.
 */
import { Type } from 'typebox';

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
 * The largest integer the API takes anywhere (ids, counters, orders). A JavaScript number holds
 * integers exactly only up to here, and node:sqlite refuses to read a larger stored INTEGER back,
 * so a value above it would be stored and then break every read of its row.
 */
export const MAX_INTEGER = Number.MAX_SAFE_INTEGER;

/** The last page a page-numbered list serves: page × limit stays far inside what SQLite's OFFSET takes. */
export const PAGE_MAX = 100_000;

/** A numeric id the service assigned (check groups, snippets, dashboards, alert channels). */
export function IntegerId(options: { default?: unknown } = {}) {
  return Type.Integer({ minimum: 1, maximum: MAX_INTEGER, ...options });
}

/** An integer count or position with no domain limit of its own, bounded so it can be stored and read back. */
export function BoundedInteger(minimum: number, options: { default?: unknown } = {}) {
  return Type.Integer({ minimum, maximum: MAX_INTEGER, ...options });
}

/** `limit` and `page` of a page-numbered list (the reference's limit 1..100; page from 1 up to PAGE_MAX). */
export function PageNumberQuery(defaultLimit = 10) {
  return {
    limit: Type.Integer({ minimum: 1, maximum: 100, default: defaultLimit }),
    page: Type.Integer({ minimum: 1, maximum: PAGE_MAX, default: 1 }),
  };
}

/** `nullable: true` as a type list (shared with the job protocol's shapes, which say why). */
export { Nullable } from '../../shared/checks/schema.ts';
