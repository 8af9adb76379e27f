import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { DatabaseSync, type StatementSync } from 'node:sqlite';

/** The database file inside DATA_DIR. One file, so a backup is one copy of the directory. */
export const DB_FILE = 'outpost.db';

/**
 * Opens (creating if needed) the service database with the pragmas every connection needs.
 * - WAL: readers (the public API) never block the single writer (the dispatcher) and vice versa.
 * - busy_timeout: a second process (e.g. `outpost account create` while the service runs) waits
 *   for the write lock instead of failing at once with SQLITE_BUSY.
 * - foreign_keys: SQLite leaves them off per connection by default; our cascades rely on them.
 */
export function openDatabase(dataDir: string): DatabaseSync {
  mkdirSync(dataDir, { recursive: true });
  const db = new DatabaseSync(path.join(dataDir, DB_FILE));
  db.exec('PRAGMA journal_mode = WAL');
  db.exec('PRAGMA busy_timeout = 5000');
  db.exec('PRAGMA foreign_keys = ON');
  // NORMAL is durable across application crashes in WAL mode; only an OS crash may lose the last
  // commits, which for monitoring results is an acceptable trade for far fewer fsyncs.
  db.exec('PRAGMA synchronous = NORMAL');
  return db;
}

/**
 * Runs fn inside BEGIN IMMEDIATE ... COMMIT. IMMEDIATE takes the write lock up front, so two
 * connections never both read-then-write and deadlock on the upgrade. Nested calls join the
 * outer transaction, because node:sqlite has no savepoint helper and callers compose repos.
 */
export function inTransaction<T>(db: DatabaseSync, fn: () => T): T {
  if (db.isTransaction) return fn();
  statement(db, 'BEGIN IMMEDIATE').run();
  try {
    const result = fn();
    statement(db, 'COMMIT').run();
    return result;
  } catch (error) {
    statement(db, 'ROLLBACK').run();
    throw error;
  }
}

/** Each connection's statements by SQL text. */
const statements = new WeakMap<DatabaseSync, Map<string, StatementSync>>();

/**
 * The statement for `sql`, prepared once per connection: for SQL on the path of every stored result
 * or alert, where compiling it would cost more than running it. Only for fixed SQL text (its
 * placeholders vary, never the text), so the cache stays as small as the code that uses it.
 */
export function statement(db: DatabaseSync, sql: string): StatementSync {
  let byText = statements.get(db);
  if (!byText) {
    byText = new Map();
    statements.set(db, byText);
  }
  let prepared = byText.get(sql);
  if (!prepared) {
    prepared = db.prepare(sql);
    byText.set(sql, prepared);
  }
  return prepared;
}

/** True when err is SQLite's UNIQUE constraint failure (node:sqlite reports it by errcode). */
export function isUniqueViolation(err: unknown): boolean {
  return (
    err instanceof Error &&
    // SQLITE_CONSTRAINT_UNIQUE = 2067, SQLITE_CONSTRAINT_PRIMARYKEY = 1555
    ((err as { errcode?: number }).errcode === 2067 || (err as { errcode?: number }).errcode === 1555)
  );
}

/** True when err is SQLite's FOREIGN KEY constraint failure (SQLITE_CONSTRAINT_FOREIGNKEY = 787). */
export function isForeignKeyViolation(err: unknown): boolean {
  return err instanceof Error && (err as { errcode?: number }).errcode === 787;
}

export function nowIso(): string {
  return new Date().toISOString();
}
