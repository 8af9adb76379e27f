/**
 * Set-up of the SQLite migration tests: a temp DATA_DIR per test, and a database in it as the
 * versions before a given migration left it (the migrations below it, then the test's own rows),
 * which the test then opens with the current store to see what the migration made of them.
 */
import { rmSync } from 'node:fs';
import type { DatabaseSync } from 'node:sqlite';
import { afterEach, beforeEach } from 'vitest';
import { MIGRATIONS, runMigrations } from '../../src/service/store/migrations/index.ts';
import { SqliteDatabase } from '../../src/service/store/sql/sqlite-database.ts';
import { openDatabase } from '../../src/service/store/sqlite/db.ts';
import { tempDataDir } from '../helpers/public-api.ts';

/** A fresh temp DATA_DIR for each test (removed after it); call the returned function inside a test for the current one. */
export function tempDataDirEachTest(): () => string {
  let dataDir: string | undefined;
  beforeEach(() => {
    dataDir = tempDataDir();
  });
  afterEach(() => {
    if (dataDir) rmSync(dataDir, { recursive: true, force: true });
    dataDir = undefined;
  });
  return () => {
    if (!dataDir) throw new Error('the temp DATA_DIR is made per test: use it inside a test or hook');
    return dataDir;
  };
}

/** Writes the SQLite database in `dataDir` as versions before `version` left it: the migrations below it, then `rows`. */
export async function sqliteDatabaseBefore(
  dataDir: string,
  version: number,
  rows: (db: DatabaseSync) => void,
): Promise<void> {
  const db = openDatabase(dataDir);
  try {
    await runMigrations(
      new SqliteDatabase(db),
      MIGRATIONS.filter((m) => m.version < version),
    );
    rows(db);
  } finally {
    db.close();
  }
}
