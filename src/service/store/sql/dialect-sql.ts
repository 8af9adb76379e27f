/**
 * The few SQL expressions that SQLite and PostgreSQL spell differently, so a repository writes one
 * query and asks for the spelling. JSON is stored as text in both.
 */
import type { Dialect } from './database.ts';

export interface DialectSql {
  /** A JSON member as text (null when absent). */
  jsonText(column: string, key: string): string;
  /** A JSON member as a number (null when absent). */
  jsonNumber(column: string, key: string): string;
  /** A JSON boolean member as 1 or 0 (null when absent). */
  jsonFlag(column: string, key: string): string;
  /** The smaller / larger of two values (SQLite's two-argument min and max). */
  least(a: string, b: string): string;
  greatest(a: string, b: string): string;
  /** A scalar subquery: `column` of the rows of `from` (a table and its WHERE), comma-joined in `orderBy` order. */
  joinedList(column: string, from: string, orderBy: string): string;
  /**
   * A FROM item: the elements of the JSON array `json` (a JSON text column or parameter), in a column
   * `value` of `alias`. PostgreSQL gives them as text: CAST(value AS BIGINT) where numbers are meant.
   */
  jsonArrayTable(json: string, alias: string): string;
  /**
   * The order rows of `table` (or its alias) were written in: SQLite's rowid; on PostgreSQL the `seq`
   * identity column migration 023 gives the tables whose lists follow that order.
   */
  insertionOrder(table: string): string;
  /** After a SELECT that reads a row to update it: lock it until the transaction ends (empty on SQLite, whose writer is single). */
  forUpdate: string;
  /** After a SELECT that claims rows: lock them, skipping rows another transaction holds (empty on SQLite, whose writer is single). */
  forUpdateSkipLocked: string;
  /** Planner hints that only SQLite has (empty / the plain expression on PostgreSQL): read through this index, */
  indexedBy(index: string): string;
  /** and do not use an index for this column (SQLite's unary plus). */
  noIndex(column: string): string;
  /** A subquery of the elements of a JSON array of strings (a bound list, one parameter whatever its length). */
  jsonArrayValues(json: string): string;
  /** A new random UUID (v4) as text, a fresh one per row of a statement. */
  newUuid: string;
}

type Spelled = Omit<DialectSql, 'jsonArrayValues'>;

const SQLITE: Spelled = {
  jsonText: (column, key) => `json_extract(${column}, '$.${key}')`,
  jsonNumber: (column, key) => `json_extract(${column}, '$.${key}')`,
  jsonFlag: (column, key) => `json_extract(${column}, '$.${key}')`,
  least: (a, b) => `min(${a}, ${b})`,
  greatest: (a, b) => `max(${a}, ${b})`,
  joinedList: (column, from, orderBy) =>
    `(SELECT group_concat(${column}) FROM (SELECT ${column} FROM ${from} ORDER BY ${orderBy}))`,
  jsonArrayTable: (json, alias) => `json_each(${json}) AS ${alias}`,
  insertionOrder: (table) => `${table}.rowid`,
  forUpdate: '',
  forUpdateSkipLocked: '',
  indexedBy: (index) => `INDEXED BY ${index}`,
  noIndex: (column) => `+${column}`,
  // randomblob is evaluated once per call and row: five calls give the 122 random bits of a v4 UUID.
  newUuid: `lower(hex(randomblob(4)) || '-' || hex(randomblob(2)) || '-4' || substr(hex(randomblob(2)), 2) || '-'
    || substr('89ab', 1 + abs(random()) % 4, 1) || substr(hex(randomblob(2)), 2) || '-' || hex(randomblob(6)))`,
};

const POSTGRES: Spelled = {
  jsonText: (column, key) => `(${column}::jsonb ->> '${key}')`,
  jsonNumber: (column, key) => `((${column}::jsonb ->> '${key}')::double precision)`,
  jsonFlag: (column, key) => `((${column}::jsonb -> '${key}')::boolean)::integer`,
  least: (a, b) => `LEAST(${a}, ${b})`,
  greatest: (a, b) => `GREATEST(${a}, ${b})`,
  joinedList: (column, from, orderBy) => `(SELECT string_agg(${column}, ',' ORDER BY ${orderBy}) FROM ${from})`,
  jsonArrayTable: (json, alias) => `jsonb_array_elements_text(CAST(${json} AS jsonb)) AS ${alias}(value)`,
  insertionOrder: (table) => `${table}.seq`,
  forUpdate: 'FOR UPDATE',
  forUpdateSkipLocked: 'FOR UPDATE SKIP LOCKED',
  indexedBy: () => '',
  noIndex: (column) => column,
  newUuid: 'CAST(gen_random_uuid() AS text)',
};

/** What each dialect spells, and the subquery of a JSON array's elements built on its FROM item. */
const withArrayValues = (spelled: Spelled): DialectSql => ({
  ...spelled,
  jsonArrayValues: (json) => `SELECT v.value FROM ${spelled.jsonArrayTable(json, 'v')}`,
});

const BY_DIALECT = { sqlite: withArrayValues(SQLITE), postgres: withArrayValues(POSTGRES) };

export function dialectSql(dialect: Dialect): DialectSql {
  return BY_DIALECT[dialect];
}
