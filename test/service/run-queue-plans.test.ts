/**
 * The run queue's hot statements read the queued runs' partial indexes on SQLite, never an index
 * of every run: finished runs are kept a day, so a plan through all of a pair's or a location's runs
 * costs thousands of rows per enqueue or claim after a day, which a short benchmark never shows.
 * A check's stored results are read through (check_id, seq), the one index led by the check
 * (migration 029), newest first and without a sort. A check session's runs (migration 031) are
 * claimed first through the same claim index, without a sort of the location's queue.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MIGRATIONS, runMigrations } from '../../src/service/store/migrations/index.ts';
import { listOfCheck, recentOfChecks } from '../../src/service/store/repos/results.ts';
import { getManyChecks } from '../../src/service/store/repos/checks.ts';
import { dialectStatements, OUTCOMES_SINCE, RUN_QUEUE_READS, SqlRunRepo } from '../../src/service/store/repos/runs.ts';
import { dialectSql } from '../../src/service/store/sql/dialect-sql.ts';
import { openSqliteDatabase, type SqliteDatabase } from '../../src/service/store/sql/sqlite-database.ts';
import type { NewRun } from '../../src/service/store/dispatch-types.ts';

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
  const params = {
    locationId: 'l',
    checkTypes: '[]',
    runtimes: '[]',
    now: 'n',
    checkId: 'c',
    dueAt: 'd',
    uptime: 1,
    heavy: 1,
    agentId: 'a',
    leaseExpiresAt: 'x',
    endReason: 'r',
    runIds: '[]',
    pairs: '[]',
    since: 's',
    shedReason: 'r',
  };
  const positional = ['a', 'c', ...(sql.includes('result_type = ?') ? ['FINAL'] : []), 1, 1].slice(
    0,
    sql.split('?').length - 1,
  );
  const rows = sql.includes('?') ? statement.all(...positional) : statement.all(params);
  return (rows as Array<{ detail: string }>).map((r) => r.detail);
}

/** The plan's steps that read `table`. */
const plan = (sql: string, table = 'runs'): string[] =>
  explain(sql).filter((d) => new RegExp(` ${table}( |$)`).test(` ${d}`));

it.each([
  ['supersede', 'runs_queued_by_check'],
  ['claim', 'runs_claim'],
  ['claimNewest', 'runs_claim'],
  ['shedLate', 'runs_claim'],
] as const)('%s reads %s', (name, index) => {
  const steps = plan(statements[name]);
  expect(steps.length).toBeGreaterThan(0);
  for (const step of steps.filter((s) => !s.includes('run_id=?') && !s.includes('LIST SUBQUERY')))
    expect(step, name).toContain(`INDEX ${index}`);
});

it("a batch's supersede reads each of its pairs through runs_queued_by_check", () => {
  expect(plan(statements.supersedeMany, 'r')).toEqual([
    'SEARCH r USING INDEX runs_queued_by_check (check_id=? AND location_id=?)',
  ]);
});

it('a batch of results reads its runs by primary key, not by a scan', () => {
  const steps = plan(statements.getMany);
  expect(steps.length).toBeGreaterThan(0);
  for (const step of steps)
    expect(step).toMatch(/SEARCH runs USING INDEX sqlite_autoindex_runs_1 \(run_id=\?\)|PRIMARY KEY/);
});

it('a batch of results reads its checks by primary key, not every check of the account', () => {
  const steps = explain(getManyChecks('sqlite')).filter((s) => / c( |$)/.test(` ${s}`));
  expect(steps.length).toBeGreaterThan(0);
  for (const step of steps) expect(step).toMatch(/SEARCH c USING INDEX sqlite_autoindex_checks_1 \(id=\?\)/);
});

it.each(Object.keys(RUN_QUEUE_READS) as Array<keyof typeof RUN_QUEUE_READS>)(
  '%s reads only the open runs, through their partial indexes',
  (name) => {
    const steps = plan(RUN_QUEUE_READS[name]);
    expect(steps.length).toBeGreaterThan(0);
    for (const step of steps) expect(step, name).toMatch(/INDEX runs_(claim|lease_expiry)\b/);
  },
);

it("admission's outcomes read only the window's finished runs, through runs_finished", () => {
  const steps = plan(OUTCOMES_SINCE);
  expect(steps.length).toBeGreaterThan(0);
  for (const step of steps) expect(step).toMatch(/INDEX runs_finished\b/);
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

// Session runs sort first by their deadline (the moment they were queued), so the index order
// serves them; claimNewest's one sort merges its two LIMITed halves, at most twice the slots.
it.each(['claim', 'shedLate'] as const)(
  '%s needs no sort of the queue (session runs go first through the index order)',
  (name) => {
    expect(explain(statements[name]).join('\n')).not.toMatch(/TEMP B-TREE/);
  },
);
it('claimNewest reads each half as a range of the claim index', () => {
  const reads = plan(statements.claimNewest).filter((s) => !s.includes('run_id=?'));
  expect(reads).toHaveLength(4);
  for (const step of reads)
    expect(step).toMatch(/SEARCH runs USING INDEX runs_claim \(location_id=\? AND check_class=\? AND start_by[<>]\?\)/);
});

describe('a check session run in the queue', () => {
  const runs = () => new SqlRunRepo(db);
  const at = (ms: number) => new Date(ms).toISOString();
  const t0 = Date.parse('2026-06-01T12:00:00.000Z');
  let n = 0;
  const queued = (dueMs: number, startByMs: number, sessionId?: string): NewRun => ({
    runId: `run-${++n}`,
    accountId: 'acct',
    checkId: `check-${n}`,
    locationId: 'loc',
    checkType: 'API',
    checkClass: 'uptime',
    dueAt: at(dueMs),
    startBy: at(startByMs),
    timeoutMs: 30_000,
    check: {
      id: `check-${n}`,
      accountId: 'acct',
      name: `c${n}`,
      checkType: 'API',
      shouldFail: false,
      runtimeId: null,
    } as unknown as NewRun['check'],
    ...(sessionId ? { sessionId } : {}),
  });
  const claimOne = (order: 'deadline' | 'newest', nowMs: number) =>
    runs().claim({
      locationId: 'loc',
      agentId: 'a',
      checkTypes: ['API'],
      runtimes: [],
      slots: { uptime: 1, heavy: 0 },
      now: at(nowMs),
      leaseExpiresAt: at(nowMs + 60_000),
      order,
    });

  beforeAll(async () => {
    await db.run("INSERT INTO accounts (id, name, created_at) VALUES ('acct', 'a', '2026-01-01T00:00:00Z')");
    await db.run(
      "INSERT INTO private_locations (id, account_id, name, slug_name, icon, created_at) VALUES ('loc', 'acct', 'l', 'l', 'location', '2026-01-01T00:00:00Z')",
    );
  });

  it.each(['deadline', 'newest'] as const)(
    'is claimed before scheduled runs due earlier (%s order), and is never shed',
    async (order) => {
      // Two scheduled runs due before the session was triggered, their deadlines still ahead.
      await runs().enqueueMany([queued(t0 - 5_000, t0 + 5_000), queued(t0 - 1_000, t0 + 9_000)], at(t0));
      const [session] = await runs().enqueueMany([queued(t0, t0, 'session-1')], at(t0));
      // Later than the session run's own deadline: a scheduled first attempt that late would be shed.
      const now = t0 + 3_000;
      const request = {
        locationId: 'loc',
        agentId: 'a',
        checkTypes: ['API'] as const,
        runtimes: [],
        slots: { uptime: 1, heavy: 0 },
      };
      expect(
        await runs().shedLate({
          ...request,
          checkTypes: [...request.checkTypes],
          now: at(now),
          leaseExpiresAt: at(now),
          order,
        }),
      ).toBe(0);
      const [first] = await claimOne(order, now);
      expect(first?.runId).toBe(session?.run.runId);
      expect(first?.sessionId).toBe('session-1');
      const [next] = await claimOne(order, now);
      expect(next?.sessionId).toBeNull();
      await db.run("DELETE FROM runs WHERE state = 'queued'");
    },
  );

  it('is not superseded by a scheduled run of its check and location, nor supersedes one', async () => {
    const session = queued(t0, t0, 'session-2');
    await runs().enqueueMany([session], at(t0));
    const later = { ...queued(t0 + 10_000, t0 + 15_000), checkId: session.checkId };
    const [enqueued] = await runs().enqueueMany([later], at(t0 + 10_000));
    expect(enqueued?.superseded).toEqual([]);
    const [again] = await runs().enqueueMany(
      [{ ...queued(t0 + 11_000, t0 + 11_000, 'session-3'), checkId: session.checkId }],
      at(t0 + 11_000),
    );
    expect(again?.superseded).toEqual([]);
    expect((await runs().get(later.runId))?.state).toBe('queued');
  });
});
