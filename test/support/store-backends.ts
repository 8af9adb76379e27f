/**
 * The store's tests run on both backends: `describe.each(storeBackends())`. Each test gets a fresh
 * database (`fresh()`), which may be opened more than once (two connections, a reopen). PostgreSQL
 * joins when OUTPOST_TEST_DATABASE_URL is set, and must under CI (./postgres.ts).
 */
import { rmSync } from 'node:fs';
import { openPostgresStore } from '../../src/service/store/postgres/index.ts';
import type { SqlDatabase, SqlParams } from '../../src/service/store/sql/database.ts';
import { PostgresDatabase } from '../../src/service/store/sql/postgres-database.ts';
import { openSqliteDatabase } from '../../src/service/store/sql/sqlite-database.ts';
import { openSqliteStore } from '../../src/service/store/sqlite/index.ts';
import type { Store } from '../../src/service/store/store.ts';
import { tempDataDir } from '../helpers/public-api.ts';
import { createTestDatabase, postgresAvailable } from './postgres.ts';

export interface FreshStore {
  /** The service's data directory (the secrets key file lives here on both backends). */
  dataDir: string;
  /** Opens the fresh database (again): every call is another connection to the same data. */
  open(): Promise<Store>;
  /** Rows of a query on the same database, through a connection of its own (to look at what the store wrote). */
  query(sql: string, params?: SqlParams): Promise<Record<string, unknown>[]>;
  /** A connection of its own to the same database, unmigrated until the caller migrates it (the caller closes it). */
  connect(): SqlDatabase;
  /** Closes what open() opened and removes the database. */
  dispose(): Promise<void>;
}

export interface StoreBackend {
  name: 'sqlite' | 'postgres';
  fresh(): Promise<FreshStore>;
}

const sqlite: StoreBackend = {
  name: 'sqlite',
  async fresh() {
    const dataDir = tempDataDir();
    return freshStore(
      dataDir,
      () => openSqliteStore(dataDir),
      () => openSqliteDatabase(dataDir),
      async () => rmSync(dataDir, { recursive: true, force: true }),
    );
  },
};

const postgres: StoreBackend = {
  name: 'postgres',
  async fresh() {
    const dataDir = tempDataDir();
    const database = await createTestDatabase();
    return freshStore(
      dataDir,
      () => openPostgresStore(database.url, { dataDir, maxConnections: 4 }),
      () => new PostgresDatabase(database.url, { maxConnections: 1 }),
      async () => {
        await database.drop();
        rmSync(dataDir, { recursive: true, force: true });
      },
    );
  },
};

function freshStore(
  dataDir: string,
  openOne: () => Promise<Store>,
  connect: () => SqlDatabase,
  remove: () => Promise<void>,
): FreshStore {
  const opened: Store[] = [];
  return {
    dataDir,
    async open() {
      const store = await openOne();
      opened.push(store);
      return store;
    },
    connect,
    async query(sql, params) {
      const db = connect();
      try {
        return await db.all(sql, params);
      } finally {
        await db.close();
      }
    },
    async dispose() {
      await Promise.all(opened.splice(0).map((store) => store.close()));
      await remove();
    },
  };
}

/** SQLite always; PostgreSQL when its test cluster is there (always under CI). */
export function storeBackends(): StoreBackend[] {
  return postgresAvailable() ? [sqlite, postgres] : [sqlite];
}
