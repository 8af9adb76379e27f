/** TCP checks: POST /v1/checks/tcp and PUT /v1/checks/tcp/{id} (list, read and delete are in checks.ts). */
import {
  TcpCheckCreateBody,
  TcpCheckResponse,
  TcpCheckUpdateBody,
  normalizeTcpBody,
} from '../checks/tcp-check-schema.ts';
import { checkWriteRoutes } from './check-writes.ts';

export const tcpCheckRoutes = checkWriteRoutes({
  path: '/v1/checks/tcp',
  checkType: 'TCP',
  createBody: TcpCheckCreateBody,
  updateBody: TcpCheckUpdateBody,
  response: TcpCheckResponse,
  normalize: normalizeTcpBody,
});
