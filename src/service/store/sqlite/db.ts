/**
 * What the SQLite repositories not yet written against SqlDatabase (../sql/database.ts) share: the
 * synchronous transaction and the statement cache on the raw node:sqlite connection.
 */
import type { DatabaseSync, StatementSync } from 'node:sqlite';
import { openSqliteDatabase, SQLITE_BUSY_TIMEOUT_MS } from '../sql/sqlite-database.ts';

export { isForeignKeyViolation, isUniqueViolation, nowIso } from '../sql/database.ts';
export { DB_FILE } from '../sql/sqlite-database.ts';

/** The raw connection of a newly opened service database, for tools and tests that read rows directly. */
export function openDatabase(dataDir: string): DatabaseSync {
  return openSqliteDatabase(dataDir).raw;
}

/**
 * Runs fn inside BEGIN IMMEDIATE ... COMMIT. IMMEDIATE takes the write lock up front, so two
 * connections never both read-then-write and deadlock on the upgrade. Nested calls join the
 * outer transaction, because node:sqlite has no savepoint helper and callers compose repos.
 */
export function inTransaction<T>(db: DatabaseSync, fn: () => T): T {
  if (db.isTransaction) return fn();
  beginImmediate(db);
  try {
    const result = fn();
    statement(db, 'COMMIT').run();
    return result;
  } catch (error) {
    statement(db, 'ROLLBACK').run();
    throw error;
  }
}

/**
 * A synchronous caller cannot retry asynchronously as SqliteDatabase does, so it waits for another
 * connection's write lock the old way: blocking, for up to five seconds.
 */
function beginImmediate(db: DatabaseSync): void {
  db.exec('PRAGMA busy_timeout = 5000');
  try {
    statement(db, 'BEGIN IMMEDIATE').run();
  } finally {
    db.exec(`PRAGMA busy_timeout = ${SQLITE_BUSY_TIMEOUT_MS}`);
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
