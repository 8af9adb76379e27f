/**
 * The URL monitor runner. A URL monitor is a lightweight API check: one GET of one URL, with
 * status-code and response-time assertions and the response-time limits. It is run by the API check
 * engine itself (./api.ts) with the monitor turned into the API check it is, so redirects, TLS,
 * timings, error words and the verdict are the same code, and the result is an ordinary
 * `apiCheckResult` (which also feeds the service's certificate-expiry alert for https URLs).
 */
import type { UrlCheckDefinition } from '../../shared/checks/monitors.ts';
import type { ApiCheckDefinition } from '../../shared/checks/types.ts';
import { apiCheckRunner } from './api.ts';
import type { CheckContext, CheckOutcome, CheckRunner } from './runner.ts';

/** The API check a URL monitor is: GET, no body, headers, query or auth; and never any user code. */
export function toApiCheck(check: UrlCheckDefinition): ApiCheckDefinition {
  const { request, localSetupScript: _setup, localTearDownScript: _tearDown, scripts: _scripts, ...rest } = check;
  return {
    ...rest,
    checkType: 'API',
    request: {
      method: 'GET',
      url: request.url,
      followRedirects: request.followRedirects,
      skipSSL: request.skipSSL,
      ipFamily: request.ipFamily,
      body: '',
      bodyType: 'NONE',
      headers: [],
      queryParameters: [],
      assertions: request.assertions,
      basicAuth: null,
    },
  };
}

async function runUrlCheck(check: UrlCheckDefinition, ctx: CheckContext): Promise<CheckOutcome> {
  return apiCheckRunner.run(toApiCheck(check), ctx);
}

/** Runs URL monitors through the API engine; registered in ./index.ts. */
export const urlCheckRunner: CheckRunner<UrlCheckDefinition> = {
  checkType: 'URL',
  run: runUrlCheck,
};
