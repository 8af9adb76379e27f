/**
 * The body of a multistep check (the reference's ChecksV1MultiStepCheckCreate / Update): a
 * `@playwright/test` script whose steps are API requests (and may open pages). The same properties
 * as a browser check without `sslCheckDomain` (browser-check-schema.ts).
 */
import { Type } from 'typebox';
import { scriptedCheckProperties } from './browser-check-schema.ts';
import { checkResponseSchema } from './common-check-schema.ts';

export { normalizeScriptedBody as normalizeMultiStepBody } from './browser-check-schema.ts';

export const MultiStepCheckCreateBody = Type.Object(scriptedCheckProperties('create', 'MULTI_STEP'), {
  additionalProperties: false,
});
export const MultiStepCheckUpdateBody = Type.Object(scriptedCheckProperties('update', 'MULTI_STEP'), {
  additionalProperties: false,
});
/** A multistep check as GET returns it (ChecksV1MultiStepCheck). */
export const MultiStepCheckResponse = checkResponseSchema(scriptedCheckProperties('create', 'MULTI_STEP', true));
