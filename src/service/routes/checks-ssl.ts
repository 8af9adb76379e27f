/** SSL monitors: POST /v1/checks/ssl and PUT /v1/checks/ssl/{id} (list, read and delete are in checks.ts). */
import {
  normalizeSslBody,
  SslCheckCreateBody,
  SslCheckResponse,
  SslCheckUpdateBody,
} from '../checks/ssl-check-schema.ts';
import { checkWriteRoutes } from './check-writes.ts';

export const sslCheckRoutes = checkWriteRoutes({
  path: '/v1/checks/ssl',
  checkType: 'SSL',
  createBody: SslCheckCreateBody,
  updateBody: SslCheckUpdateBody,
  response: SslCheckResponse,
  normalize: normalizeSslBody,
});
