/**
 * The whole service listening on loopback, for tests that open its pages in a browser or over HTTP:
 * `url` is its base URL, `api()` calls the public API as an account with real HTTP.
 */
import { rmSync } from 'node:fs';
import { afterAll, beforeAll } from 'vitest';
import { createAccount } from '../../src/service/accounts.ts';
import { buildService, type Service } from '../../src/service/app.ts';
import { loadServiceConfig } from '../../src/service/config.ts';
import { type TestAccount, tempDataDir } from './public-api.ts';

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
  const dataDir = tempDataDir();
  const service = await buildService(loadServiceConfig({ DATA_DIR: dataDir, PORT: '0', HOST: '127.0.0.1', ...env }), {
    logger: false,
  });
  const url = await service.start();
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
    async close() {
      await service.stop();
      rmSync(dataDir, { recursive: true, force: true });
    },
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
