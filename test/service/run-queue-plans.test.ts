/**
 * The run queue's hot statements read the queued runs' partial indexes on SQLite, never an index
 * of every run: finished runs are kept a day, so a plan through all of a pair's or a location's runs
 * costs thousands of rows per enqueue or claim after a day, which a short benchmark never shows.
 * A check's stored results are read through (check_id, seq), the one index led by the check
 * (migration 029), newest first and without a sort.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { MIGRATIONS, runMigrations } from '../../src/service/store/migrations/index.ts';
import { listOfCheck, recentOfChecks } from '../../src/service/store/repos/results.ts';
import { dialectStatements, RUN_QUEUE_READS } from '../../src/service/store/repos/runs.ts';
import { dialectSql } from '../../src/service/store/sql/dialect-sql.ts';
import { openSqliteDatabase, type SqliteDatabase } from '../../src/service/store/sql/sqlite-database.ts';

let dir: string;
let db: SqliteDatabase;
beforeAll(async () => {
  dir = mkdtempSync(path.join(tmpdir(), 'outpost-plans-'));
  db = openSqliteDatabase(dir);
  await runMigrations(db, MIGRATIONS);
});
afterAll(async () => {
  await db.close();
  rmSync(dir, { recursive: true, force: true });
});

const statements = dialectStatements(dialectSql('sqlite'));

/** Every step of the plan; `?` parameters get placeholder values (a results list: account, check, [type], seq, limit). */
function explain(sql: string): string[] {
  const statement = db.raw.prepare(`EXPLAIN QUERY PLAN ${sql}`);
  statement.setAllowUnknownNamedParameters(true);
  const params = { locationId: 'l', checkTypes: '[]', runtimes: '[]', now: 'n', checkId: 'c', dueAt: 'd', uptime: 1, heavy: 1, agentId: 'a', leaseExpiresAt: 'x', endReason: 'r' };
  const positional = ['a', 'c', ...(sql.includes('result_type = ?') ? ['FINAL'] : []), 1, 1];
  const rows = sql.includes('?') ? statement.all(...positional) : statement.all(params);
  return (rows as Array<{ detail: string }>).map((r) => r.detail);
}

/** The plan's steps that read `table`. */
const plan = (sql: string, table = 'runs'): string[] => explain(sql).filter((d) => new RegExp(` ${table}( |$)`).test(` ${d}`));

it.each([
  ['supersede', 'runs_queued_by_check'],
  ['claim', 'runs_claim'],
  ['claimNewest', 'runs_claim'],
  ['shedLate', 'runs_claim'],
] as const)('%s reads %s', (name, index) => {
  const steps = plan(statements[name]);
  expect(steps.length).toBeGreaterThan(0);
  for (const step of steps.filter((s) => !s.includes('run_id=?') && !s.includes('LIST SUBQUERY'))) expect(step, name).toContain(`INDEX ${index}`);
});

it.each(Object.keys(RUN_QUEUE_READS) as Array<keyof typeof RUN_QUEUE_READS>)('%s reads only the open runs, through their partial indexes', (name) => {
  const steps = plan(RUN_QUEUE_READS[name]);
  expect(steps.length).toBeGreaterThan(0);
  for (const step of steps) expect(step, name).toMatch(/INDEX runs_(claim|lease_expiry)\b/);
});

it.each([
  ['of any type', listOfCheck(false)],
  ['of one type', listOfCheck(true)],
  ['newest of every check', recentOfChecks('sqlite')],
])("a check's results %s are read through results_by_check_seq", (_, sql) => {
  const steps = plan(sql, 'results').filter((s) => !s.includes('INTEGER PRIMARY KEY'));
  expect(steps.length).toBeGreaterThan(0);
  for (const step of steps) expect(step).toContain('INDEX results_by_check_seq');
});

it.each([false, true])('a page of results (type filter %s) comes newest first from the index, unsorted', (byType) => {
  expect(explain(listOfCheck(byType)).join('\n')).not.toMatch(/TEMP B-TREE/);
});
