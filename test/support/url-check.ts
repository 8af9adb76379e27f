/** `urlCheck`: a URL monitor's definition with the reference defaults (GET, redirects followed, IPv4). */
import type { UrlCheckDefinition, UrlRequest } from '../../src/shared/checks/monitors.ts';
import { uptimeCheckBase } from './check-definition.ts';

export function urlCheck(
  request: Partial<UrlRequest> & { url: string },
  extra: Partial<UrlCheckDefinition> = {},
): UrlCheckDefinition {
  return {
    ...uptimeCheckBase('URL', { id: 'chk_url', accountId: 'acc_test', name: 'url test' }, 3000, 5000),
    ...extra,
    request: { method: 'GET', followRedirects: true, skipSSL: false, ipFamily: 'IPv4', assertions: [], ...request },
  };
}
