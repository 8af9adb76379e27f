/**
 * Migration 018: check statistics start from the results a database already holds, so a dashboard
 * opened right after the upgrade shows the last day rather than nothing.
 */
import { rmSync } from 'node:fs';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { MIGRATIONS, runMigrations } from '../../src/service/store/migrations/index.ts';
import { SqliteDatabase } from '../../src/service/store/sql/sqlite-database.ts';
import { openDatabase } from '../../src/service/store/sqlite/db.ts';
import { openSqliteStore } from '../../src/service/store/sqlite/index.ts';
import { tempDataDir } from '../helpers/public-api.ts';

let dataDir: string;
beforeEach(() => {
  dataDir = tempDataDir();
});
afterEach(() => {
  rmSync(dataDir, { recursive: true, force: true });
});

/** A database as versions before 018 left it: one check with four results, one of them two days old. */
async function databaseBefore018(nowMs: number): Promise<void> {
  const db = openDatabase(dataDir);
  try {
    await runMigrations(
      new SqliteDatabase(db),
      MIGRATIONS.filter((m) => m.version < 18),
    );
    const at = (agoMs: number) => new Date(nowMs - agoMs).toISOString();
    db.prepare('INSERT INTO accounts (id, name, created_at) VALUES (?, ?, ?)').run('acc-1', 'Acme', at(0));
    db.prepare(
      `INSERT INTO checks (id, account_id, check_type, name, activated, muted, frequency, body, created_at)
       VALUES ('chk-1', 'acc-1', 'API', 'Home', 1, 0, 1, '{}', ?)`,
    ).run(at(0));
    const insert = db.prepare(
      `INSERT INTO results (id, account_id, check_id, run_id, check_name, location_id, run_location, attempts, result_type, created_at, payload)
       VALUES (?, 'acc-1', 'chk-1', ?, 'Home', 'loc', 'office', 1, ?, ?, ?)`,
    );
    const results: Array<[string, number, number, boolean]> = [
      ['FINAL', 60_000, 100, false],
      ['FINAL', 3_600_000, 300, true],
      ['ATTEMPT', 3_600_000, 50, true],
      ['FINAL', 2 * 86_400_000, 9000, true],
    ];
    results.forEach(([type, ago, ms, failed], i) => {
      const payload = { responseTime: ms, hasFailures: failed, hasErrors: false, isCancelled: false };
      insert.run(`res-${i}`, `run-${i}`, type, at(ago), JSON.stringify(payload));
    });
  } finally {
    db.close();
  }
}

describe('migration 018 (check statistics)', () => {
  it('fills the rollups from the last day of FINAL results', async () => {
    const now = Date.now();
    await databaseBefore018(now);
    const store = await openSqliteStore(dataDir);
    try {
      const stats = (await store.checkStats.forChecks('acc-1', ['chk-1'], now)).get('chk-1');
      expect(stats).toMatchObject({ runs: 2, failures: 1, availability: 50, avgMs: 200 });
    } finally {
      await store.close();
    }
  });
});
