/** ICMP checks: POST /v1/checks/icmp and PUT /v1/checks/icmp/{id} (list, read and delete are in checks.ts). */
import { IcmpCheckCreateBody, IcmpCheckResponse, IcmpCheckUpdateBody } from '../checks/icmp-check-schema.ts';
import { checkWriteRoutes } from './check-writes.ts';

export const icmpCheckRoutes = checkWriteRoutes({
  path: '/v1/checks/icmp',
  checkType: 'ICMP',
  createBody: IcmpCheckCreateBody,
  updateBody: IcmpCheckUpdateBody,
  response: IcmpCheckResponse,
});
