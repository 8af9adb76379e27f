/**
 * What the tests of the status page API share (app.inject on a TestApi): the shapes of a service and
 * of a page of a list, making a service, and the 400s of a list's limit.
 */
import { expect } from 'vitest';
import { json, type TestAccount, type TestApi } from '../helpers/public-api.ts';

export interface ServiceView {
  id: string;
  name: string;
  accountId: string;
  created_at: string;
  updated_at: string | null;
}

export interface Paged<T> {
  length: number;
  entries: T[];
  nextId: string | null;
}

/** A status page service of `account`, made through the API (a 200, as the reference answers). */
export async function createService(api: TestApi, account: TestAccount, name: string): Promise<ServiceView> {
  const res = await api.app.inject({
    method: 'POST',
    url: '/v1/status-pages/services',
    headers: account.headers,
    payload: { name },
  });
  expect(res.statusCode).toBe(200);
  return json<ServiceView>(res);
}

/** GET `listUrl` with each of `limits` answers 400 naming limit. */
export async function expectLimitsRefused(
  api: TestApi,
  account: TestAccount,
  listUrl: string,
  limits: (string | number)[],
): Promise<void> {
  for (const limit of limits) {
    const res = await api.app.inject({ method: 'GET', url: `${listUrl}?limit=${limit}`, headers: account.headers });
    expect(res.statusCode, String(limit)).toBe(400);
    expect(json(res).message).toContain('limit');
  }
}
