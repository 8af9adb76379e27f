/**
 * Set-up of the store-level tests: a fresh database on the given backend for each test, disposed of
 * after it; a store opened on it and one account; and the account, location and check most store
 * tests start from.
 */
import { afterEach, beforeEach } from 'vitest';
import type { PrivateLocation, Store, StoredCheck } from '../../src/service/store/store.ts';
import type { FreshStore, StoreBackend } from './store-backends.ts';

/**
 * A fresh database on `backend` for each test, disposed of after it. The returned FreshStore stands
 * for the current test's database, so it can be kept in a describe block and used inside its tests.
 */
export function freshDatabaseEachTest(backend: StoreBackend): FreshStore {
  let current: FreshStore | undefined;
  beforeEach(async () => {
    current = await backend.fresh();
  });
  afterEach(async () => {
    await current?.dispose();
    current = undefined;
  });
  const now = (): FreshStore => {
    if (!current) throw new Error('the fresh database is made per test: use it inside a test or hook');
    return current;
  };
  return {
    get dataDir() {
      return now().dataDir;
    },
    open: () => now().open(),
    query: (sql, params) => now().query(sql, params),
    connect: () => now().connect(),
    dispose: () => now().dispose(),
  };
}

export interface FreshAccount {
  fresh: FreshStore;
  store: Store;
  accountId: string;
}

/** A fresh database, a store opened on it and one account, per test. Read the fields inside tests (they change per test). */
export function freshAccountEachTest(backend: StoreBackend): FreshAccount {
  const t = { fresh: freshDatabaseEachTest(backend) } as FreshAccount;
  beforeEach(async () => {
    t.store = await t.fresh.open();
    t.accountId = (await t.store.accounts.create('Acme')).account.id;
  });
  return t;
}

/** The private location the store tests run checks at: "Office", slug `office` unless given. */
export function addOffice(store: Store, accountId: string, slugName = 'office'): Promise<PrivateLocation> {
  return store.locations.create(accountId, { name: 'Office', slugName, icon: 'location', proxyUrl: null });
}

/**
 * An active API check every minute at one location, written straight into the store (so the
 * scheduler does not know it); `body` is stored with the name, and `overrides` replace any field.
 */
export function addCheck(
  store: Store,
  accountId: string,
  locationId: string,
  name: string,
  body: Record<string, unknown> = {},
  overrides: Partial<NewCheck> = {},
): Promise<StoredCheck> {
  return store.checks.create({
    accountId,
    checkType: 'API',
    name,
    activated: true,
    muted: false,
    frequency: 1,
    frequencyOffset: null,
    locationIds: [locationId],
    body: { name, ...body },
    ...overrides,
  });
}

/** What the store needs to create a check. */
type NewCheck = Parameters<Store['checks']['create']>[0];

/** An account with its office location. */
export async function accountWithLocation(
  store: Store,
  name = 'Acme',
): Promise<{ accountId: string; location: PrivateLocation }> {
  const { account } = await store.accounts.create(name);
  return { accountId: account.id, location: await addOffice(store, account.id) };
}

/** An account with a private location and one API check running there: what most store tests start from. */
export async function accountWithCheck(
  store: Store,
  name = 'Acme',
): Promise<{ accountId: string; location: PrivateLocation; check: StoredCheck }> {
  const { accountId, location } = await accountWithLocation(store, name);
  const check = await addCheck(store, accountId, location.id, 'Home');
  return { accountId, location, check };
}
