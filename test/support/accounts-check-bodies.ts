/**
 * Bodies with every field at its default, for the tests (and benchmarks) that build checks and
 * check groups, or expect what the API fills in: an API check's request, and a check group's body.
 */
import type { CheckGroupBody } from '../../src/service/store/check-group-types.ts';
import type { ApiRequest } from '../../src/shared/checks/types.ts';

/** An API check's request with the reference defaults: a GET without body, headers, query, assertions or auth. */
export function apiRequest(over: Partial<ApiRequest> & { url: string }): ApiRequest {
  return {
    method: 'GET',
    followRedirects: true,
    skipSSL: false,
    ipFamily: 'IPv4',
    body: '',
    bodyType: 'NONE',
    headers: [],
    queryParameters: [],
    assertions: [],
    basicAuth: null,
    ...over,
  };
}

/**
 * A check group's body with the reference defaults: what a create with only a name stores (GET answers
 * it with the id, timestamps, alertChannelSubscriptions and the default alert settings added).
 */
export function checkGroupBody(name: string, over: Partial<CheckGroupBody> = {}): CheckGroupBody {
  return {
    name,
    activated: true,
    muted: false,
    tags: [],
    locations: [],
    concurrency: 3,
    apiCheckDefaults: { url: '', headers: [], queryParameters: [], assertions: [], basicAuth: null },
    runtimeId: null,
    environmentVariables: [],
    setupSnippetId: null,
    tearDownSnippetId: null,
    localSetupScript: null,
    localTearDownScript: null,
    privateLocations: [],
    runParallel: null,
    alertSettings: null,
    retryStrategy: 'FALLBACK',
    useGlobalAlertSettings: null,
    doubleCheck: false,
    ...over,
  };
}
