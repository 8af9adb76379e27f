/**
 * A Fastify instance with only the public API, the error handlers and a real SQLite store in a
 * temporary DATA_DIR. Requests go through app.inject, so no port is opened. The scheduler is
 * replaced by a recorder of hooks.checkChanged calls, which is what the routes owe it.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import Fastify, { type FastifyInstance, type LightMyRequestResponse } from 'fastify';
import { createAccount } from '../../src/service/accounts.ts';
import type { ServiceHooks } from '../../src/service/app.ts';
import { loadServiceConfig } from '../../src/service/config.ts';
import { errorHandler, notFoundHandler } from '../../src/service/http/errors.ts';
import { publicApi } from '../../src/service/routes/index.ts';
import { openSqliteStore } from '../../src/service/store/sqlite/index.ts';
import type { Store, StoredCheck } from '../../src/service/store/store.ts';

export function tempDataDir(): string {
  return mkdtempSync(path.join(tmpdir(), 'outpost-test-'));
}

export interface HookCall {
  accountId: string;
  checkId: string;
  check: StoredCheck | undefined;
}

export interface TestAccount {
  accountId: string;
  apiKey: string;
  headers: Record<string, string>;
}

export interface TestApi {
  app: FastifyInstance;
  store: Store;
  dataDir: string;
  hookCalls: HookCall[];
  newAccount(name?: string): Promise<TestAccount>;
  /** A request to the public API as `account` (its key and account headers), through app.inject. */
  request(
    account: TestAccount,
    method: 'GET' | 'POST' | 'PUT' | 'DELETE',
    url: string,
    payload?: object,
  ): Promise<LightMyRequestResponse>;
  close(): Promise<void>;
}

/** `env`: further service settings, e.g. an alert gateway, on top of a fresh data directory. */
export async function startTestApi(env: Record<string, string> = {}): Promise<TestApi> {
  const dataDir = tempDataDir();
  const config = loadServiceConfig({ DATA_DIR: dataDir, PORT: '0', ...env });
  const store = await openSqliteStore(config.dataDir);
  const hookCalls: HookCall[] = [];
  const hooks: ServiceHooks = {
    async checkChanged(accountId, checkId, check) {
      hookCalls.push({ accountId, checkId, check });
    },
  };
  const app = Fastify({ logger: false });
  app.setErrorHandler(errorHandler);
  app.setNotFoundHandler(notFoundHandler);
  await app.register(publicApi, { store, config, hooks });
  await app.ready();
  return {
    app,
    store,
    dataDir,
    hookCalls,
    async newAccount(name = 'Acme') {
      const { accountId, apiKey } = await createAccount(store, name);
      return { accountId, apiKey, headers: { authorization: `Bearer ${apiKey}`, 'x-service-account': accountId } };
    },
    request(account, method, url, payload) {
      return app.inject({ method, url, headers: account.headers, ...(payload === undefined ? {} : { payload }) });
    },
    async close() {
      await app.close();
      await store.close();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

export interface KeyView {
  id: string;
  rawKey?: string;
  maskedKey: string;
  created_at: string;
  updated_at: string | null;
}

export interface LocationView {
  id: string;
  name: string;
  slugName: string;
  icon: string;
  proxyUrl: string | null;
  created_at: string;
  updated_at: string | null;
  keys: KeyView[];
}

export interface ApiErrorView {
  statusCode: number;
  error: string;
  message: string;
}

/** Parses a JSON response body as T: a cast, since the tests themselves check the shape. */
export function json<T = ApiErrorView>(res: LightMyRequestResponse): T {
  return res.json() as T;
}

/** The first element, failing the test when there is none (noUncheckedIndexedAccess). */
export function first<T>(items: readonly T[]): T {
  const item = items[0];
  if (item === undefined) throw new Error('expected at least one element');
  return item;
}
