/**
 * The SQLite write-ahead log is checkpointed by the worker thread, not by the connection that
 * commits: pages reach the database file while the service's connection has its own checkpoint
 * pushed back to the backstop, and closing the store stops the worker.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, expect, it, vi } from 'vitest';
import { DB_FILE, openSqliteDatabase, type SqliteDatabase } from '../../src/service/store/sql/sqlite-database.ts';
import { BACKSTOP_PAGES } from '../../src/service/store/sql/wal-checkpointer.ts';

let dir: string;
let db: SqliteDatabase;
beforeEach(() => {
  dir = mkdtempSync(path.join(tmpdir(), 'outpost-wal-'));
  db = openSqliteDatabase(dir);
});
afterEach(async () => {
  await db.close();
  rmSync(dir, { recursive: true, force: true });
});

const fileBytes = () => statSync(path.join(dir, DB_FILE)).size;

it('checkpoints from the worker: the database file grows while the connection never checkpoints itself', async () => {
  const errors: string[] = [];
  db.checkpointInBackground((m) => errors.push(m));
  expect(db.raw.prepare('PRAGMA wal_autocheckpoint').get()).toEqual({ wal_autocheckpoint: BACKSTOP_PAGES });
  await db.exec('CREATE TABLE t (id INTEGER PRIMARY KEY, body TEXT)');
  const before = fileBytes();
  // About 8 MB in 400 commits: 2,000 pages, twice SQLite's default automatic checkpoint and a tenth
  // of the backstop, so only the worker can have moved them into the file.
  const body = 'x'.repeat(20_000);
  for (let i = 0; i < 400; i++) await db.transaction(() => db.run('INSERT INTO t (body) VALUES (?)', [body]));
  await vi.waitFor(() => expect(fileBytes()).toBeGreaterThan(before + 7_000_000), { timeout: 10_000, interval: 50 });
  expect(errors).toEqual([]);
});

it('without it, the same writes stay in the log until SQLite checkpoints on its own', async () => {
  db.raw.exec(`PRAGMA wal_autocheckpoint = ${BACKSTOP_PAGES}`);
  await db.exec('CREATE TABLE t (id INTEGER PRIMARY KEY, body TEXT)');
  const before = fileBytes();
  const body = 'x'.repeat(20_000);
  for (let i = 0; i < 400; i++) await db.transaction(() => db.run('INSERT INTO t (body) VALUES (?)', [body]));
  expect(fileBytes()).toBeLessThan(before + 1_000_000);
});

it('a process whose last step is closing the store exits cleanly (the CLI does that)', () => {
  const script = `import { openSqliteStore } from ${JSON.stringify(path.resolve('src/service/store/sqlite/index.ts'))};
    const store = await openSqliteStore(${JSON.stringify(dir)});
    await store.close();`;
  const r = spawnSync(process.execPath, ['--input-type=module', '-e', script], { encoding: 'utf8' });
  // An unsettled top-level await (the worker's exit not awaited) is exit code 13 with a warning.
  expect({ status: r.status, stderr: r.stderr }).toEqual({ status: 0, stderr: '' });
});

it('close stops the worker and still closes the connection', async () => {
  db.checkpointInBackground();
  await db.close();
  expect(db.raw.isOpen).toBe(false);
});
