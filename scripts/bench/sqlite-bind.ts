/**
 * `npm run bench -- sqlite-bind [--rows 100000] [--rounds 5]`: the cost of one INSERT of 15 named
 * values into SQLite, bound as node:sqlite binds an object (each key looked up among the statement's
 * parameters) against the service's SqliteDatabase, which numbers the `$name`s and binds by position
 * (src/service/store/sql/sql-params.ts). Both in one process, taking turns, 100 rows per transaction
 * in a file database in WAL mode as the service runs it. Medians of the rounds, microseconds per row.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { openSqliteDatabase, type SqliteDatabase } from '../../src/service/store/sql/sqlite-database.ts';
import { numberFlags, roundTo, summarize } from './_stats.ts';

const COLUMNS = Array.from({ length: 15 }, (_, i) => `c${i}`);
const INSERT = `INSERT INTO t (${COLUMNS.join(', ')}) VALUES (${COLUMNS.map((c) => `$${c}`).join(', ')})`;

function valuesOf(row: number): Record<string, string> {
  return Object.fromEntries(COLUMNS.map((c) => [c, `value ${row} ${c}`]));
}

/** Microseconds per row through `insert`, 100 rows per transaction. */
function microsPerRow(db: SqliteDatabase, rows: number, insert: (values: Record<string, string>) => void): number {
  const start = performance.now();
  for (let row = 0; row < rows; row += 100) {
    db.raw.exec('BEGIN');
    for (let i = row; i < Math.min(rows, row + 100); i++) insert(valuesOf(i));
    db.raw.exec('COMMIT');
  }
  return ((performance.now() - start) * 1000) / rows;
}

export async function run(args: string[]): Promise<Record<string, unknown>> {
  const { rows, rounds } = numberFlags(args, { rows: 100_000, rounds: 5 });
  const dir = mkdtempSync(path.join(tmpdir(), 'outpost-bench-bind-'));
  const db = openSqliteDatabase(dir);
  try {
    db.raw.exec(`CREATE TABLE t (id INTEGER PRIMARY KEY, ${COLUMNS.map((c) => `${c} TEXT`).join(', ')})`);
    const byName = db.raw.prepare(INSERT);
    const named: number[] = [];
    const numbered: number[] = [];
    for (let r = 0; r < rounds; r++) {
      named.push(microsPerRow(db, rows, (values) => byName.run(values)));
      // db.run settles at once outside a transaction of its own; the statement ran synchronously.
      numbered.push(microsPerRow(db, rows, (values) => void db.run(INSERT, values)));
    }
    const [byKey, byPosition] = [summarize(named).p50, summarize(numbered).p50];
    return {
      workload: `INSERT of ${COLUMNS.length} named TEXT values, ${rows} rows per round, ${rounds} rounds, taking turns`,
      microsPerRow: { boundByName: byKey, boundByPosition: byPosition },
      ratio: roundTo(byKey / byPosition),
      rounds: { boundByName: named.map((x) => roundTo(x)), boundByPosition: numbered.map((x) => roundTo(x)) },
    };
  } finally {
    await db.close();
    rmSync(dir, { recursive: true, force: true });
  }
}
