/** The assertion the public API's validation tests share: a 400 whose message names what was wrong. */
import type { LightMyRequestResponse } from 'fastify';
import { expect } from 'vitest';
import { json } from '../helpers/public-api.ts';

/** Expects `res` to be a 400 whose message contains `mention`; `label` names the case in a failure. */
export function expectBadRequestNaming(res: LightMyRequestResponse, mention: string, label?: string): void {
  expect(res.statusCode, label).toBe(400);
  expect(json(res).message).toContain(mention);
}
