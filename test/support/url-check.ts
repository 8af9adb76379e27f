/** `urlCheck`: a URL monitor's definition with the reference defaults (GET, redirects followed, IPv4). */
import type { UrlCheckDefinition, UrlRequest } from '../../src/shared/checks/monitors.ts';

export function urlCheck(
  request: Partial<UrlRequest> & { url: string },
  extra: Partial<UrlCheckDefinition> = {},
): UrlCheckDefinition {
  return {
    id: 'chk_url',
    accountId: 'acc_test',
    name: 'url test',
    checkType: 'URL',
    shouldFail: false,
    runtimeId: null,
    degradedResponseTime: 3000,
    maxResponseTime: 5000,
    ...extra,
    request: { method: 'GET', followRedirects: true, skipSSL: false, ipFamily: 'IPv4', assertions: [], ...request },
  };
}
