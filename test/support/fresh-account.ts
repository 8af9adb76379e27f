/**
 * Per-test set-up of the store-level tests: a fresh database on the given backend, a store opened
 * on it and one account, disposed of after the test. Read the fields inside tests (they change per test).
 */
import { afterEach, beforeEach } from 'vitest';
import type { Store } from '../../src/service/store/store.ts';
import type { FreshStore, StoreBackend } from './store-backends.ts';

export interface FreshAccount {
  fresh: FreshStore;
  store: Store;
  accountId: string;
}

export function freshAccountEachTest(backend: StoreBackend): FreshAccount {
  const t = {} as FreshAccount;
  beforeEach(async () => {
    t.fresh = await backend.fresh();
    t.store = await t.fresh.open();
    t.accountId = (await t.store.accounts.create('Acme')).account.id;
  });
  afterEach(async () => {
    await t.fresh.dispose();
  });
  return t;
}
