/**
 * What the check tests of every type expect of another account: it can neither update (at the check
 * type's path), read nor delete a check, each answered as if the check did not exist.
 */
import { expect } from 'vitest';
import { json, type TestAccount, type TestApi } from '../helpers/public-api.ts';

/** Expects `other`'s PUT at `/v1/checks/<typePath>/<id>`, GET and DELETE of each check to be a 404. */
export async function expectChecksHiddenFrom(
  api: TestApi,
  other: TestAccount,
  checks: ReadonlyArray<readonly [typePath: string, id: string]>,
): Promise<void> {
  const notFound = { statusCode: 404, error: 'Not Found', message: 'Check not found' };
  for (const [typePath, id] of checks) {
    const put = await api.request(other, 'PUT', `/v1/checks/${typePath}/${id}`, { name: 'stolen' });
    expect([put.statusCode, json(put)]).toEqual([404, notFound]);
    expect((await api.request(other, 'GET', `/v1/checks/${id}`)).statusCode).toBe(404);
    expect((await api.request(other, 'DELETE', `/v1/checks/${id}`)).statusCode).toBe(404);
  }
}
