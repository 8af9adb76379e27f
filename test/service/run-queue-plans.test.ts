/**
 * The run queue's hot statements read the queued runs' partial indexes on SQLite, never an index
 * of every run: finished runs are kept a day, so a plan through all of a pair's or a location's runs
 * costs thousands of rows per enqueue or claim after a day, which a short benchmark never shows.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { dialectStatements, RUN_QUEUE_READS } from '../../src/service/store/repos/runs.ts';
import { dialectSql } from '../../src/service/store/sql/dialect-sql.ts';
import { openSqliteDatabase, type SqliteDatabase } from '../../src/service/store/sql/sqlite-database.ts';
import { MIGRATIONS, runMigrations } from '../../src/service/store/migrations/index.ts';

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

function plan(sql: string): string[] {
  const explain = db.raw.prepare(`EXPLAIN QUERY PLAN ${sql}`);
  explain.setAllowUnknownNamedParameters(true);
  const params = { locationId: 'l', checkTypes: '[]', runtimes: '[]', now: 'n', checkId: 'c', dueAt: 'd', uptime: 1, heavy: 1, agentId: 'a', leaseExpiresAt: 'x', endReason: 'r' };
  return (explain.all(params) as Array<{ detail: string }>).map((r) => r.detail).filter((d) => / runs /.test(`${d} `));
}

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
