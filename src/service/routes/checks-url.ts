/** URL monitors: POST /v1/checks/url and PUT /v1/checks/url/{id} (list, read and delete are in checks.ts). */
import {
  normalizeUrlBody,
  UrlCheckCreateBody,
  UrlCheckResponse,
  UrlCheckUpdateBody,
} from '../checks/url-check-schema.ts';
import { checkWriteRoutes } from './check-writes.ts';

export const urlCheckRoutes = checkWriteRoutes({
  path: '/v1/checks/url',
  checkType: 'URL',
  createBody: UrlCheckCreateBody,
  updateBody: UrlCheckUpdateBody,
  response: UrlCheckResponse,
  normalize: normalizeUrlBody,
});
