/**
 * The one SQL interface the store's repositories are written against, so the same repository code
 * runs on SQLite (the embedded default, ./sqlite-database.ts) and on PostgreSQL (./postgres-database.ts).
 *
 * SQL text is shared. Parameters are either positional (`?`, an array) or named (`$name`, an object);
 * the PostgreSQL backend rewrites both to its `$1` form once per text. Where the two databases truly
 * differ (row locks that skip locked rows, JSON paths), a repository asks `dialect`.
 *
 * Transactions are async and join: code that runs inside `transaction()` (directly or in a repository
 * it calls) runs on the transaction's connection without being handed it, because the database
 * tracks the current transaction per async context.
 */
export type Dialect = 'sqlite' | 'postgres';

export type SqlValue = string | number | bigint | null | Uint8Array;
export type SqlParams = readonly SqlValue[] | Readonly<Record<string, SqlValue>>;

export interface SqlRunResult {
  /** Rows the statement inserted, updated or deleted. */
  changes: number;
}

export interface SqlExecutor {
  all<Row = Record<string, unknown>>(sql: string, params?: SqlParams): Promise<Row[]>;
  get<Row = Record<string, unknown>>(sql: string, params?: SqlParams): Promise<Row | undefined>;
  run(sql: string, params?: SqlParams): Promise<SqlRunResult>;
}

export interface TransactionOptions {
  /**
   * PostgreSQL only. `serializable` (the default) makes read-then-write transactions as safe across
   * replicas as SQLite's single writer makes them, and is retried on a serialization failure, so fn
   * must have no effect outside the database. `read committed` is for single-purpose transactions
   * whose statements already say which rows they may touch (row locks that skip locked rows).
   */
  isolation?: 'serializable' | 'read committed';
}

/** For the transactions whose statements name the rows they may touch (TransactionOptions). */
export const READ_COMMITTED: TransactionOptions = { isolation: 'read committed' };

export interface SqlDatabase extends SqlExecutor {
  readonly dialect: Dialect;
  /** Runs fn in one transaction; nested calls join the outer one. */
  transaction<T>(fn: () => Promise<T>, options?: TransactionOptions): Promise<T>;
  /** Runs one or more statements without parameters (schema changes). */
  exec(sql: string): Promise<void>;
  /** Answers when the database does: a trivial query (readiness). */
  ping(): Promise<void>;
  close(): Promise<void>;
}

/** A unique or primary key constraint failed (SQLite extended codes 2067, 1555; PostgreSQL 23505). */
export function isUniqueViolation(err: unknown): boolean {
  return hasCode(err, [2067, 1555], '23505');
}

/** A foreign key constraint failed (SQLite 787; PostgreSQL 23503). */
export function isForeignKeyViolation(err: unknown): boolean {
  return hasCode(err, [787], '23503');
}

function hasCode(err: unknown, sqlite: number[], postgres: string): boolean {
  if (!(err instanceof Error)) return false;
  const { errcode, code } = err as { errcode?: number; code?: string };
  return (errcode !== undefined && sqlite.includes(errcode)) || code === postgres;
}

export function nowIso(): string {
  return new Date().toISOString();
}
