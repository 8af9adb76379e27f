/**
 * An account of a service listening on loopback, made in its store, and the public API called as
 * that account over real HTTP: for tests that start the service themselves (with settings of their
 * own) rather than through test/helpers/web-service.ts.
 */
import { expect } from 'vitest';
import { createAccount } from '../../src/service/accounts.ts';
import type { Store } from '../../src/service/store/store.ts';

export interface HttpApiAccount {
  accountId: string;
  /** Those of a JSON request as the account. */
  headers: Record<string, string>;
  /** Any request as the account; resolves to the status and the JSON body, whatever the status. */
  call(method: string, path: string, body?: unknown): Promise<{ status: number; body: Record<string, unknown> }>;
  /** A POST as the account that fails the test unless answered with `status`; resolves to the JSON body. */
  post<T = Record<string, unknown>>(path: string, body: object, status?: number): Promise<T>;
}

export async function httpApiAccount(store: Store, baseUrl: string, name = 'Acme'): Promise<HttpApiAccount> {
  const { accountId, apiKey } = await createAccount(store, name);
  const headers = {
    authorization: `Bearer ${apiKey}`,
    'x-service-account': accountId,
    'content-type': 'application/json',
  };
  const send = (method: string, path: string, body?: unknown) =>
    fetch(`${baseUrl}${path}`, { method, headers, ...(body === undefined ? {} : { body: JSON.stringify(body) }) });
  return {
    accountId,
    headers,
    async call(method, path, body) {
      const res = await send(method, path, body);
      return { status: res.status, body: (await res.json()) as Record<string, unknown> };
    },
    async post<T>(path: string, body: object, status = 201): Promise<T> {
      const res = await send('POST', path, body);
      expect(res.status, await res.clone().text()).toBe(status);
      return (await res.json()) as T;
    },
  };
}
