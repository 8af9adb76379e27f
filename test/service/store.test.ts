import { rmSync } from 'node:fs';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ConflictError } from '../../src/service/http/errors.ts';
import { MIGRATIONS, type Migration, runMigrations } from '../../src/service/store/migrations/index.ts';
import { SqliteDatabase } from '../../src/service/store/sql/sqlite-database.ts';
import { openDatabase } from '../../src/service/store/sqlite/db.ts';
import { openSqliteStore } from '../../src/service/store/sqlite/index.ts';
import { hashKey } from '../../src/service/store/repos/keys.ts';
import type { Store, StoredResult } from '../../src/service/store/store.ts';
import type { RunResult } from '../../src/shared/protocol.ts';
import { tempDataDir } from '../helpers/public-api.ts';
import { accountWithCheck, accountWithLocation, freshDatabaseEachTest } from '../support/fresh-account.ts';
import { storeBackends } from '../support/store-backends.ts';

let dataDir: string;
const opened: Store[] = [];
async function open(): Promise<Store> {
  const store = await openSqliteStore(dataDir);
  opened.push(store);
  return store;
}

beforeEach(() => {
  dataDir = tempDataDir();
});
afterEach(async () => {
  await Promise.all(opened.splice(0).map((s) => s.close()));
  rmSync(dataDir, { recursive: true, force: true });
});

describe('migrations', () => {
  it('applies each migration once, also when the store is reopened', async () => {
    const first = await open();
    await first.accounts.create('Acme');
    await first.close();
    await open();

    const db = openDatabase(dataDir);
    try {
      const rows = db.prepare('SELECT version, name FROM schema_migrations ORDER BY version').all();
      expect(rows).toEqual(MIGRATIONS.map((m) => ({ version: m.version, name: m.name })));
      expect(await runMigrations(new SqliteDatabase(db))).toEqual([]);
      // Data survives the reopen, so the second open did not recreate tables.
      expect(db.prepare('SELECT name FROM accounts').all()).toEqual([{ name: 'Acme' }]);
    } finally {
      db.close();
    }
  });

  it('rolls back a failing migration together with its record', async () => {
    const db = openDatabase(dataDir);
    try {
      const broken: Migration = {
        version: 1,
        name: 'broken',
        async up(d) {
          await d.ddl('CREATE TABLE half (x)');
          throw new Error('boom');
        },
      };
      await expect(runMigrations(new SqliteDatabase(db), [broken])).rejects.toThrow('boom');
      expect(db.prepare("SELECT name FROM sqlite_master WHERE name = 'half'").get()).toBeUndefined();
      expect(db.prepare('SELECT COUNT(*) AS n FROM schema_migrations').get()).toEqual({ n: 0 });
    } finally {
      db.close();
    }
  });

  it('refuses migrations listed out of order', async () => {
    const db = openDatabase(dataDir);
    try {
      const m = (version: number): Migration => ({ version, name: `m${version}`, async up() {} });
      await expect(runMigrations(new SqliteDatabase(db), [m(2), m(1)])).rejects.toThrow(/out of order/);
    } finally {
      db.close();
    }
  });
});

describe.each(storeBackends())('on $name', (backend) => {
  const fresh = freshDatabaseEachTest(backend);
  const open = () => fresh.open();

  it('applies each migration once, also when the store is reopened', async () => {
    const first = await open();
    await first.accounts.create('Acme');
    await open();
    const rows = await fresh.query('SELECT version, name FROM schema_migrations ORDER BY version');
    expect(rows).toEqual(MIGRATIONS.map((m) => ({ version: m.version, name: m.name })));
    expect(await fresh.query('SELECT name FROM accounts')).toEqual([{ name: 'Acme' }]);
  });

  describe('keys', () => {
    it('stores only hashes of API keys and resolves raw keys', async () => {
      const store = await open();
      const { account, apiKey } = await store.accounts.create('Acme');
      expect(apiKey).toMatch(/^op_[A-Za-z0-9_-]{43}$/);
      expect(await store.accounts.findAccountByApiKey(apiKey)).toEqual(account);
      expect(await store.accounts.findAccountByApiKey(`${apiKey}x`)).toBeUndefined();

      const rows = await fresh.query('SELECT key_hash, masked_key FROM api_keys');
      expect(rows).toEqual([{ key_hash: hashKey(apiKey), masked_key: `op_…${apiKey.slice(-4)}` }]);
    });

    it('revoked API keys no longer resolve', async () => {
      const store = await open();
      const { account } = await store.accounts.create('Acme');
      const { record, apiKey } = await store.accounts.createApiKey(account.id);
      expect(await store.accounts.revokeApiKey(account.id, record.id)).toBe(true);
      expect(await store.accounts.findAccountByApiKey(apiKey)).toBeUndefined();
      expect(await store.accounts.listApiKeys(account.id)).toHaveLength(1);
    });

    it('resolves location keys with findByKey, allows two and refuses a third', async () => {
      const store = await open();
      const { accountId, location } = await accountWithLocation(store);
      const first = await store.locations.createKey(accountId, location.id);
      const second = await store.locations.createKey(accountId, location.id);
      expect(first.rawKey).toMatch(/^pl_[0-9a-f]{64}$/);
      expect(await store.locations.findByKey(first.rawKey)).toEqual(location);
      expect(await store.locations.findByKey(second.rawKey)).toEqual(location);
      await expect(store.locations.createKey(accountId, location.id)).rejects.toBeInstanceOf(ConflictError);

      expect(await store.locations.deleteKey(accountId, location.id, first.record.id)).toBe(true);
      expect(await store.locations.findByKey(first.rawKey)).toBeUndefined();
      await expect(store.locations.createKey(accountId, location.id)).resolves.toBeDefined();
    });
  });

  describe('results', () => {
    async function setup(store: Store) {
      const { accountId, location, check } = await accountWithCheck(store);
      const account = { id: accountId };
      const result = (runId: string): Omit<StoredResult, 'id' | 'createdAt'> => ({
        accountId,
        checkId: check.id,
        runId,
        checkName: check.name,
        locationId: location.id,
        runLocation: location.slugName,
        attempts: 1,
        payload: { runId, checkId: check.id, responseTime: 12 } as RunResult,
      });
      return { account, check, result };
    }

    it('stores a run once: a second insert is a duplicate with the same id', async () => {
      const store = await open();
      const { result } = await setup(store);
      const first = await store.results.insertOnce(result('run-1'));
      const again = await store.results.insertOnce(result('run-1'));
      expect(first.status).toBe('stored');
      expect(again).toEqual({ status: 'duplicate', id: first.id });
      expect(await store.results.countForRun('run-1')).toBe(1);
    });

    it('stores one result when two connections insert the same run concurrently', async () => {
      const a = await open();
      const b = await open();
      const { result } = await setup(a);
      const outcomes = await Promise.all([
        ...Array.from({ length: 5 }, () => a.results.insertOnce(result('run-race'))),
        ...Array.from({ length: 5 }, () => b.results.insertOnce(result('run-race'))),
      ]);
      expect(outcomes.filter((o) => o.status === 'stored')).toHaveLength(1);
      expect(new Set(outcomes.map((o) => o.id)).size).toBe(1);
      expect(await b.results.countForRun('run-race')).toBe(1);
    });

    it('pages newest first with an opaque cursor and null on the last page', async () => {
      const store = await open();
      const { account, check, result } = await setup(store);
      for (let i = 1; i <= 5; i++) await store.results.insertOnce(result(`run-${i}`));

      const seen: string[] = [];
      let cursor: string | undefined;
      const pageSizes: number[] = [];
      do {
        const page = await store.results.list(account.id, check.id, {
          limit: 2,
          ...(cursor ? { nextId: cursor } : {}),
        });
        pageSizes.push(page.entries.length);
        seen.push(...page.entries.map((e) => e.runId));
        cursor = page.nextId ?? undefined;
      } while (cursor);
      expect(pageSizes).toEqual([2, 2, 1]);
      expect(seen).toEqual(['run-5', 'run-4', 'run-3', 'run-2', 'run-1']);

      const exact = await store.results.list(account.id, check.id, { limit: 5 });
      expect(exact.nextId).toBeNull();
      // Another account sees nothing of this check.
      const other = await store.accounts.create('Other');
      expect((await store.results.list(other.account.id, check.id, { limit: 10 })).entries).toEqual([]);
    });
  });
});
