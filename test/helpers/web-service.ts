/**
 * The whole service listening on loopback, for tests that open its pages in a browser or over HTTP:
 * `url` is its base URL, `api()` calls the public API as an account with real HTTP.
 */
import { afterAll, beforeAll } from 'vitest';
import { createAccount } from '../../src/service/accounts.ts';
import type { Service } from '../../src/service/app.ts';
import type { TestAccount } from './public-api.ts';
import { startRunningService } from './running-service.ts';

export interface WebService {
  service: Service;
  url: string;
  dataDir: string;
  newAccount(name?: string): Promise<TestAccount>;
  /** The public API over HTTP as `account`; throws with the body when the answer is not 2xx. */
  api<T = unknown>(account: TestAccount, method: string, path: string, body?: unknown): Promise<T>;
  close(): Promise<void>;
}

export async function startWebService(env: Record<string, string> = {}): Promise<WebService> {
  const { service, baseUrl: url, dataDir, stop } = await startRunningService(env);
  return {
    service,
    url,
    dataDir,
    async newAccount(name = 'Acme') {
      const { accountId, apiKey } = await createAccount(service.store, name);
      return { accountId, apiKey, headers: { authorization: `Bearer ${apiKey}`, 'x-service-account': accountId } };
    },
    async api<T>(account: TestAccount, method: string, path: string, body?: unknown): Promise<T> {
      const res = await fetch(`${url}${path}`, {
        method,
        headers: { ...account.headers, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
      const text = await res.text();
      if (!res.ok) throw new Error(`${method} ${path}: ${res.status} ${text}`);
      return (text ? JSON.parse(text) : undefined) as T;
    },
    close: stop,
  };
}

/** One service for the whole file, started before its tests and stopped after them. */
export function webServicePerFile(env: Record<string, string> = {}): { web: WebService } {
  const state = {} as { web: WebService };
  beforeAll(async () => {
    state.web = await startWebService(env);
  });
  afterAll(() => state.web?.close());
  return state;
}
