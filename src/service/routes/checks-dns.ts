/** DNS checks: POST /v1/checks/dns and PUT /v1/checks/dns/{id} (list, read and delete are in checks.ts). */
import { DnsCheckCreateBody, DnsCheckResponse, DnsCheckUpdateBody } from '../checks/dns-check-schema.ts';
import { checkWriteRoutes } from './check-writes.ts';

export const dnsCheckRoutes = checkWriteRoutes({
  path: '/v1/checks/dns',
  checkType: 'DNS',
  createBody: DnsCheckCreateBody,
  updateBody: DnsCheckUpdateBody,
  response: DnsCheckResponse,
});
