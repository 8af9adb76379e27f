/** Multistep checks: POST /v1/checks/multistep and PUT /v1/checks/multistep/{id} (list, read and delete are in checks.ts). */
import {
  MultiStepCheckCreateBody,
  MultiStepCheckResponse,
  MultiStepCheckUpdateBody,
  normalizeMultiStepBody,
} from '../checks/multistep-check-schema.ts';
import { checkWriteRoutes } from './check-writes.ts';

export const multiStepCheckRoutes = checkWriteRoutes({
  path: '/v1/checks/multistep',
  checkType: 'MULTI_STEP',
  createBody: MultiStepCheckCreateBody,
  updateBody: MultiStepCheckUpdateBody,
  response: MultiStepCheckResponse,
  normalize: normalizeMultiStepBody,
});
