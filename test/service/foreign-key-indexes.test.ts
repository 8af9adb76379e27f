/**
 * Every foreign key that cascades has an index led by its child column, on both backends. Without
 * one, deleting a parent scans the whole child table inside the write transaction: deleting a check
 * scanned every stored result, 24 ms per check at 50,000 results and growing with them.
 */
import { describe, expect, it } from 'vitest';
import { freshDatabaseEachTest } from '../support/fresh-account.ts';
import { storeBackends } from '../support/store-backends.ts';

interface ForeignKey {
  child: string;
  column: string;
  parent: string;
}

/** Cascading foreign keys of one column, and the leading column of each full (not partial) index. */
const SQLITE = {
  foreignKeys: `
    SELECT m.name AS child, f."from" AS "column", f."table" AS parent FROM sqlite_master m
    JOIN pragma_foreign_key_list(m.name) f
    WHERE m.type = 'table' AND f.on_delete = 'CASCADE' AND f.seq = 0
      AND NOT EXISTS (SELECT 1 FROM pragma_foreign_key_list(m.name) g WHERE g.id = f.id AND g.seq > 0)`,
  leading: `
    SELECT m.name AS child, i.name AS "column" FROM sqlite_master m
    JOIN pragma_index_list(m.name) l JOIN pragma_index_info(l.name) i
    WHERE m.type = 'table' AND l.partial = 0 AND i.seqno = 0`,
};
const POSTGRES = {
  foreignKeys: `
    SELECT c.conrelid::regclass::text AS child, a.attname AS "column", c.confrelid::regclass::text AS parent
    FROM pg_constraint c JOIN pg_attribute a ON a.attrelid = c.conrelid AND a.attnum = c.conkey[1]
    WHERE c.contype = 'f' AND c.confdeltype = 'c' AND array_length(c.conkey, 1) = 1
      AND c.connamespace = current_schema()::regnamespace`,
  leading: `
    SELECT i.indrelid::regclass::text AS child, a.attname AS "column"
    FROM pg_index i JOIN pg_attribute a ON a.attrelid = i.indrelid AND a.attnum = i.indkey[0]
    JOIN pg_class t ON t.oid = i.indrelid
    WHERE i.indpred IS NULL AND t.relnamespace = current_schema()::regnamespace`,
};

describe.each(storeBackends())('foreign key indexes on $name', (backend) => {
  const fresh = freshDatabaseEachTest(backend);

  it('every cascading foreign key has an index its delete can use', async () => {
    await fresh.open();
    const sql = backend.name === 'sqlite' ? SQLITE : POSTGRES;
    const keys = (await fresh.query(sql.foreignKeys)) as unknown as ForeignKey[];
    const indexed = new Set(
      ((await fresh.query(sql.leading)) as unknown as ForeignKey[]).map((r) => `${r.child}.${r.column}`),
    );
    // A sanity check of the query itself: the schema has dozens of cascading keys.
    expect(keys.length).toBeGreaterThan(20);
    const unindexed = keys
      .filter((k) => !indexed.has(`${k.child}.${k.column}`))
      .map((k) => `${k.child}.${k.column} -> ${k.parent}`);
    // The one exception: an index of every run by location led SQLite's planner away from the run
    // queue's partial indexes (the queue statistics then read a day of finished runs at each
    // scrape); deleting a location, rare, scans the runs instead.
    expect(unindexed).toEqual(['runs.location_id -> private_locations']);
  });
});
