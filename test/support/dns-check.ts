/**
 * DNS checks for the runner tests: `dnsCheck`, a definition with the reference defaults asking
 * 127.0.0.1 over UDP, and `runDnsCheck`, which runs one and returns its outcome with the DNS result.
 */
import { dnsCheckRunner } from '../../src/agent/checks/dns.ts';
import type { DnsCheckDefinition, DnsCheckResult, DnsRequest } from '../../src/shared/checks/types.ts';
import { context } from '../agent/api-fixtures.ts';
import { uptimeCheckBase } from './check-definition.ts';

export function dnsCheck(
  request: Partial<DnsRequest> & Pick<DnsRequest, 'query' | 'recordType' | 'port'>,
  extra: Partial<DnsCheckDefinition> = {},
): DnsCheckDefinition {
  return {
    ...uptimeCheckBase('DNS', { id: 'check-1', accountId: 'acct-1', name: 'dns' }, 500, 1000),
    ...extra,
    request: { nameServer: '127.0.0.1', protocol: 'UDP', assertions: [], ...request },
  };
}

export async function runDnsCheck(check: DnsCheckDefinition, timeoutMs = 5000) {
  const outcome = await dnsCheckRunner.run(check, context({ timeoutMs }));
  const result = outcome.details?.dnsCheckResult as DnsCheckResult;
  return { outcome, result, response: result.response };
}
