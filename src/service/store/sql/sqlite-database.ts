/**
 * The SqlDatabase on node:sqlite: one connection per process, statements prepared once per text.
 *
 * node:sqlite is synchronous, so a statement outside a transaction runs at once and its promise is
 * already settled. A transaction is async (its body awaits), and on one connection every statement
 * issued meanwhile would land inside it: so while one is open, statements from other async contexts
 * wait for it to end, and transactions queue one behind another. BEGIN IMMEDIATE takes the write
 * lock up front, so two connections never both read-then-write and deadlock on the upgrade.
 *
 * Another connection holding the write lock (the CLI, a second store in a test) is waited for
 * asynchronously: busy_timeout is short, because SQLite's wait blocks the thread, and with async
 * transactions the holder may be this very thread, mid-transaction. A busy statement is retried
 * after a pause, for up to BUSY_WAIT_MS.
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { DatabaseSync, type SQLInputValue, type StatementSync } from 'node:sqlite';
import { setTimeout as delay } from 'node:timers/promises';
import type { SqlDatabase, SqlParams, SqlRunResult } from './database.ts';
import { type CompiledSql, compileForSqlite, valuesFor } from './sql-params.ts';
import { BACKSTOP_PAGES, WalCheckpointer } from './wal-checkpointer.ts';

/** The database file inside DATA_DIR. One file, so a backup is one copy of the directory. */
export const DB_FILE = 'outpost.db';

/** How long a statement waits for another connection's write lock before it fails with SQLITE_BUSY. */
const BUSY_WAIT_MS = 5000;
/** The page cache's bound (KiB) and how much of the file is read through a memory map. */
const CACHE_KIB = 64 * 1024;
const MMAP_BYTES = 256 * 1024 * 1024;
/** SQLite's own (thread-blocking) wait per attempt. */
export const SQLITE_BUSY_TIMEOUT_MS = 20;

export class SqliteDatabase implements SqlDatabase {
  readonly dialect = 'sqlite' as const;
  /** The connection itself, for the repositories not yet written against SqlDatabase. */
  readonly raw: DatabaseSync;
  readonly #statements = new Map<string, Prepared>();
  readonly #inTransaction = new AsyncLocalStorage<true>();
  #open: Promise<void> | null = null;
  #checkpointer: WalCheckpointer | undefined;

  constructor(raw: DatabaseSync) {
    this.raw = raw;
  }

  all<Row>(sql: string, params?: SqlParams): Promise<Row[]> {
    return this.#whenFree(() => bind(this.#statement(sql), params, 'all') as Row[]);
  }

  get<Row>(sql: string, params?: SqlParams): Promise<Row | undefined> {
    return this.#whenFree(() => bind(this.#statement(sql), params, 'get') as Row | undefined);
  }

  run(sql: string, params?: SqlParams): Promise<SqlRunResult> {
    return this.#whenFree(() => ({
      changes: Number((bind(this.#statement(sql), params, 'run') as { changes: number | bigint }).changes),
    }));
  }

  exec(sql: string): Promise<void> {
    return this.#whenFree(() => this.raw.exec(sql));
  }

  async ping(): Promise<void> {
    await this.get('SELECT 1 AS ok');
  }

  async transaction<T>(fn: () => Promise<T>): Promise<T> {
    if (this.#inTransaction.getStore()) return fn();
    while (this.#open) await this.#open;
    let release = (): void => {};
    this.#open = new Promise((resolve) => {
      release = resolve;
    });
    try {
      return await this.#inTransaction.run(true, () => this.#commitOrRollBack(fn));
    } finally {
      this.#open = null;
      release();
    }
  }

  /**
   * Moves checkpoints of the write-ahead log to a worker thread (./wal-checkpointer.ts); this
   * connection checkpoints only when the log passes the backstop.
   */
  checkpointInBackground(onError?: (message: string) => void): void {
    if (this.#checkpointer || !this.raw.isOpen) return;
    this.raw.exec(`PRAGMA wal_autocheckpoint = ${BACKSTOP_PAGES}`);
    this.#checkpointer = new WalCheckpointer({ file: this.raw.location() ?? '', ...(onError ? { onError } : {}) });
  }

  async close(): Promise<void> {
    while (this.#open) await this.#open;
    const checkpointer = this.#checkpointer;
    this.#checkpointer = undefined;
    await checkpointer?.stop();
    if (this.raw.isOpen) this.raw.close();
  }

  /**
   * The statement for `sql`, prepared once per connection (the text is fixed; its values vary), with
   * its parameters numbered when it names them (./sql-params.ts), so they bind by position.
   */
  #statement(sql: string): Prepared {
    let prepared = this.#statements.get(sql);
    if (!prepared) {
      const numbered = compileForSqlite(sql);
      prepared = { statement: this.raw.prepare(numbered?.text ?? sql), numbered };
      this.#statements.set(sql, prepared);
    }
    return prepared;
  }

  async #commitOrRollBack<T>(fn: () => Promise<T>): Promise<T> {
    await untilNotBusy(() => this.raw.exec('BEGIN IMMEDIATE'));
    try {
      const result = await fn();
      this.raw.exec('COMMIT');
      return result;
    } catch (error) {
      if (this.raw.isTransaction) this.raw.exec('ROLLBACK');
      throw error;
    }
  }

  /** Runs fn now, unless another async context's transaction is open: then after it ends. */
  #whenFree<T>(fn: () => T): Promise<T> {
    if (this.#open && !this.#inTransaction.getStore()) return this.#open.then(() => this.#whenFree(fn));
    try {
      return Promise.resolve(fn());
    } catch (error) {
      return isBusy(error) && !this.#inTransaction.getStore() ? untilNotBusy(fn) : Promise.reject(error);
    }
  }
}

/** Runs fn, again after a pause while another connection holds the write lock, for up to BUSY_WAIT_MS. */
async function untilNotBusy<T>(fn: () => T): Promise<T> {
  const deadline = Date.now() + BUSY_WAIT_MS;
  for (let attempt = 1; ; attempt++) {
    try {
      return fn();
    } catch (error) {
      if (!isBusy(error) || Date.now() > deadline) throw error;
      await delay(Math.min(50, attempt * 2) * Math.random());
    }
  }
}

/** SQLITE_BUSY and its extended codes (the primary code is the low byte). */
function isBusy(error: unknown): boolean {
  const code = (error as { errcode?: number }).errcode;
  return code !== undefined && (code & 0xff) === 5;
}

/** A prepared statement and, when its text was numbered from `$name`s, how (null: bound as written). */
interface Prepared {
  statement: StatementSync;
  numbered: CompiledSql | null;
}

function bind({ statement, numbered }: Prepared, params: SqlParams | undefined, how: 'all' | 'get' | 'run'): unknown {
  if (params === undefined) return statement[how]();
  if (Array.isArray(params)) return statement[how](...(params as SQLInputValue[]));
  if (!numbered?.names) return statement[how](params as Record<string, SQLInputValue>);
  return statement[how](...(valuesFor(numbered, params, true) as SQLInputValue[]));
}

/**
 * Opens (creating if needed) the service database with the pragmas every connection needs.
 * - WAL: readers (the public API) never block the single writer (the dispatcher) and vice versa.
 * - busy_timeout: short, see the top of this file; the longer wait is untilNotBusy's.
 * - foreign_keys: SQLite leaves them off per connection by default; our cascades rely on them.
 * - cache_size, mmap_size: see below.
 */
export function openSqliteDatabase(dataDir: string): SqliteDatabase {
  mkdirSync(dataDir, { recursive: true });
  const db = new DatabaseSync(path.join(dataDir, DB_FILE));
  db.exec('PRAGMA journal_mode = WAL');
  db.exec(`PRAGMA busy_timeout = ${SQLITE_BUSY_TIMEOUT_MS}`);
  db.exec('PRAGMA foreign_keys = ON');
  // NORMAL is durable across application crashes in WAL mode; only an OS crash may lose the last
  // commits, which for monitoring results is an acceptable trade for far fewer fsyncs.
  db.exec('PRAGMA synchronous = NORMAL');
  // The run queue and results are written hundreds of times a second: SQLite's default 2 MB page
  // cache kept re-reading their index pages from the file, and reads through a memory map skip a
  // system call per page. Both are bounds, not allocations: small databases use what they need.
  db.exec(`PRAGMA cache_size = -${CACHE_KIB}`);
  db.exec(`PRAGMA mmap_size = ${MMAP_BYTES}`);
  return new SqliteDatabase(db);
}
