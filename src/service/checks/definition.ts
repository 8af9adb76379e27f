/**
 * Turns a stored check into the definition the dispatcher puts into a job. The stored body is the
 * API's shape (what GET returns); the job carries only what an agent needs to run it.
 */
import type { ApiCheckDefinition, ApiRequest, CheckDefinition } from '../../shared/checks/types.ts';
import type { StoredCheck } from '../store/store.ts';
import { DEFAULT_DEGRADED_RESPONSE_TIME_MS, DEFAULT_MAX_RESPONSE_TIME_MS } from './api-check-schema.ts';

export function toCheckDefinition(stored: StoredCheck): CheckDefinition {
  const body = stored.body;
  const base = {
    id: stored.id,
    accountId: stored.accountId,
    name: stored.name,
    shouldFail: body.shouldFail === true,
    runtimeId: typeof body.runtimeId === 'string' ? body.runtimeId : null,
  };
  if (stored.checkType !== 'API') {
    // No other type has a public endpoint yet; pass the body through so the agent can say so.
    return { ...body, ...base, checkType: stored.checkType };
  }
  const definition: ApiCheckDefinition = {
    ...base,
    checkType: 'API',
    request: toApiRequest(body.request as Partial<ApiRequest>),
    // The reference allows null thresholds; the agent needs numbers, so null means the default.
    degradedResponseTime: numberOr(body.degradedResponseTime, DEFAULT_DEGRADED_RESPONSE_TIME_MS),
    maxResponseTime: numberOr(body.maxResponseTime, DEFAULT_MAX_RESPONSE_TIME_MS),
  };
  return definition;
}

/** Defaults again here, so a body stored by an older version (missing a newer field) still runs. */
function toApiRequest(request: Partial<ApiRequest>): ApiRequest {
  return {
    method: request.method ?? 'GET',
    url: request.url ?? '',
    followRedirects: request.followRedirects ?? true,
    skipSSL: request.skipSSL ?? false,
    ipFamily: request.ipFamily ?? 'IPv4',
    body: request.body ?? '',
    bodyType: request.bodyType ?? 'NONE',
    headers: (request.headers ?? []).map(({ key, value }) => ({ key, value })),
    queryParameters: (request.queryParameters ?? []).map(({ key, value }) => ({ key, value })),
    assertions: (request.assertions ?? []).map((a) => ({
      source: a.source,
      comparison: a.comparison,
      property: a.property ?? '',
      target: a.target ?? '',
      // The reference defaults regex to ""; for the agent an empty pattern means none.
      regex: a.regex ? a.regex : null,
    })),
    basicAuth: request.basicAuth ?? null,
  };
}

function numberOr(value: unknown, fallback: number): number {
  return typeof value === 'number' ? value : fallback;
}
