/**
 * The SqlDatabase on PostgreSQL through node-postgres (pg): a pool of connections, each statement
 * prepared once per connection (named by its text), transactions on one pooled connection found
 * through the async context, SERIALIZABLE by default and retried on a serialization failure.
 *
 * Values come back as the SQLite backend returns them: int8 and numeric as JavaScript numbers (the
 * store's counts, sequence numbers and sizes stay far below 2^53), so one row mapping serves both.
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import { setTimeout as delay } from 'node:timers/promises';
import pg from 'pg';
import { backoffCeiling, fullJitter } from '../../../shared/backoff.ts';
import type { SqlDatabase, SqlParams, SqlRunResult, TransactionOptions } from './database.ts';
import { compileForPostgres, valuesFor } from './sql-params.ts';

const INT8_OID = 20;
const NUMERIC_OID = 1700;
/** serialization_failure and deadlock_detected: the transaction may succeed when run again. */
const RETRYABLE = new Set(['40001', '40P01']);
const MAX_ATTEMPTS = 10;

const types = {
  getTypeParser(oid: number, format?: 'text' | 'binary') {
    if (oid === INT8_OID || oid === NUMERIC_OID) return (value: string) => Number(value);
    return pg.types.getTypeParser(oid, format);
  },
} as pg.CustomTypesConfig;

export interface PostgresOptions {
  /** Connections in the pool (default 10). */
  maxConnections?: number;
  applicationName?: string;
}

export class PostgresDatabase implements SqlDatabase {
  readonly dialect = 'postgres' as const;
  readonly pool: pg.Pool;
  readonly #transaction = new AsyncLocalStorage<pg.PoolClient>();
  readonly #statementNames = new Map<string, string>();

  constructor(url: string, options: PostgresOptions = {}) {
    this.pool = new pg.Pool({
      connectionString: url,
      max: options.maxConnections ?? 10,
      application_name: options.applicationName ?? 'outpost',
      keepAlive: true,
      types,
    });
    // An idle pooled connection that the server ends (restart, failover) must not crash the process;
    // the pool drops it and the next query opens a new one.
    this.pool.on('error', () => {});
  }

  async all<Row>(sql: string, params?: SqlParams): Promise<Row[]> {
    return (await this.#query(sql, params)).rows as Row[];
  }

  async get<Row>(sql: string, params?: SqlParams): Promise<Row | undefined> {
    return (await this.#query(sql, params)).rows[0] as Row | undefined;
  }

  async run(sql: string, params?: SqlParams): Promise<SqlRunResult> {
    return { changes: (await this.#query(sql, params)).rowCount ?? 0 };
  }

  async exec(sql: string): Promise<void> {
    await (this.#transaction.getStore() ?? this.pool).query(sql);
  }

  async ping(): Promise<void> {
    await this.pool.query('SELECT 1');
  }

  async transaction<T>(fn: () => Promise<T>, options: TransactionOptions = {}): Promise<T> {
    if (this.#transaction.getStore()) return fn();
    const begin = options.isolation === 'read committed' ? 'BEGIN' : 'BEGIN ISOLATION LEVEL SERIALIZABLE';
    for (let attempt = 1; ; attempt++) {
      try {
        return await this.#once(begin, fn);
      } catch (error) {
        if (attempt >= MAX_ATTEMPTS || !RETRYABLE.has((error as { code?: string }).code ?? '')) throw error;
        // Full jitter, so transactions that collided do not collide again in step.
        await delay(fullJitter(backoffCeiling(attempt, 1, 64)));
      }
    }
  }

  async close(): Promise<void> {
    if (!this.pool.ending) await this.pool.end();
  }

  async #once<T>(begin: string, fn: () => Promise<T>): Promise<T> {
    const client = await this.pool.connect();
    try {
      await client.query(begin);
      const result = await this.#transaction.run(client, fn);
      await client.query('COMMIT');
      return result;
    } catch (error) {
      await client.query('ROLLBACK').catch(() => {});
      throw error;
    } finally {
      client.release();
    }
  }

  #query(sql: string, params: SqlParams | undefined): Promise<pg.QueryResult> {
    const compiled = compileForPostgres(sql);
    const query = {
      name: this.#statementName(compiled.text),
      text: compiled.text,
      values: valuesFor(compiled, params),
    };
    return (this.#transaction.getStore() ?? this.pool).query(query);
  }

  #statementName(text: string): string {
    let name = this.#statementNames.get(text);
    if (!name) {
      name = `s${this.#statementNames.size + 1}`;
      this.#statementNames.set(text, name);
    }
    return name;
  }
}
