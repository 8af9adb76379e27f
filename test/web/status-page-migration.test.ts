/**
 * Migration 016: incidents written before it get their start (the earliest public date of their
 * updates, or their creation when they have none), which the 90-day bars and the history read.
 */
import { describe, expect, it } from 'vitest';
import { openSqliteStore } from '../../src/service/store/sqlite/index.ts';
import { sqliteDatabaseBefore, tempDataDirEachTest } from '../support/sqlite-before-migration.ts';

const currentDataDir = tempDataDirEachTest();

const created = '2026-11-20T09:00:00.000Z';

function databaseBefore016(): Promise<void> {
  return sqliteDatabaseBefore(currentDataDir(), 16, (db) => {
    db.prepare('INSERT INTO accounts (id, name, created_at) VALUES (?, ?, ?)').run('acc-1', 'Acme', created);
    db.prepare('INSERT INTO sp_services (id, account_id, name, created_at) VALUES (?, ?, ?, ?)').run(
      'svc-1',
      'acc-1',
      'API',
      created,
    );
    const addIncident = db.prepare(
      `INSERT INTO incidents (id, account_id, name, severity, last_update_status, created_at) VALUES (?, 'acc-1', ?, 'MAJOR', 'RESOLVED', ?)`,
    );
    const addUpdate = db.prepare(
      `INSERT INTO incident_updates (id, incident_id, description, status, public_date, notify_subscribers, created_at)
       VALUES (?, ?, 'text', 'RESOLVED', ?, 0, ?)`,
    );
    for (const id of ['with-updates', 'without-updates']) {
      addIncident.run(id, id, created);
      db.prepare('INSERT INTO incident_services (incident_id, service_id, position) VALUES (?, ?, 0)').run(id, 'svc-1');
    }
    addUpdate.run('u-2', 'with-updates', '2026-11-03T10:00:00.000Z', created);
    addUpdate.run('u-1', 'with-updates', '2026-11-01T08:00:00.000Z', created);
  });
}

describe('migration 016 (status page web)', () => {
  it('gives earlier incidents their start, so the history lists them by it', async () => {
    await databaseBefore016();
    const store = await openSqliteStore(currentDataDir());
    try {
      const since = await store.statusPageReads.startedSince(
        { accountId: 'acc-1', serviceIds: ['svc-1'] },
        '2026-10-01T00:00:00.000Z',
      );
      expect(since.map((d) => [d.id, d.startedAt])).toEqual([
        ['without-updates', created],
        ['with-updates', '2026-11-01T08:00:00.000Z'],
      ]);
    } finally {
      await store.close();
    }
  });
});
