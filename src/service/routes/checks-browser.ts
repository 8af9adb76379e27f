/** Browser checks: POST /v1/checks/browser and PUT /v1/checks/browser/{id} (list, read and delete are in checks.ts). */
import {
  BrowserCheckCreateBody,
  BrowserCheckResponse,
  BrowserCheckUpdateBody,
  normalizeScriptedBody,
} from '../checks/browser-check-schema.ts';
import { checkWriteRoutes } from './check-writes.ts';

export const browserCheckRoutes = checkWriteRoutes({
  path: '/v1/checks/browser',
  checkType: 'BROWSER',
  createBody: BrowserCheckCreateBody,
  updateBody: BrowserCheckUpdateBody,
  response: BrowserCheckResponse,
  normalize: normalizeScriptedBody,
});
