/**
 * Per-test set-up of the store-level tests: a fresh database on the given backend, a store opened
 * on it and one account, disposed of after the test. Read the fields inside tests (they change per test).
 */
import { afterEach, beforeEach } from 'vitest';
import type { PrivateLocation, Store, StoredCheck } from '../../src/service/store/store.ts';
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

/** An account with a private location and one API check running there: what most store tests start from. */
export async function accountWithCheck(
  store: Store,
): Promise<{ accountId: string; location: PrivateLocation; check: StoredCheck }> {
  const { account } = await store.accounts.create('Acme');
  const location = await store.locations.create(account.id, {
    name: 'Office',
    slugName: 'office',
    icon: 'location',
    proxyUrl: null,
  });
  const check = await store.checks.create({
    accountId: account.id,
    checkType: 'API',
    name: 'Home',
    activated: true,
    muted: false,
    frequency: 1,
    frequencyOffset: null,
    locationIds: [location.id],
    body: { name: 'Home' },
  });
  return { accountId: account.id, location, check };
}
