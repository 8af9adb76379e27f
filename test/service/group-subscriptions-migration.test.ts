/**
 * Migration 015: check groups kept their alertChannelSubscriptions in their JSON body; they move
 * into alert_channel_subscriptions (ids of channels gone, or of another account, are dropped) and
 * leave the body.
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

const now = '2026-01-01T00:00:00.000Z';

/** A database as versions before 015 left it: two groups with subscriptions in their bodies. */
async function databaseBeforeMove(): Promise<{ own: number; foreign: number; gone: number }> {
  const db = openDatabase(dataDir);
  try {
    await runMigrations(
      new SqliteDatabase(db),
      MIGRATIONS.filter((m) => m.version < 15),
    );
    for (const id of ['acc-1', 'acc-2'])
      db.prepare('INSERT INTO accounts (id, name, created_at) VALUES (?, ?, ?)').run(id, id, now);
    const addChannel = (account: string) =>
      (
        db
          .prepare(
            `INSERT INTO alert_channels (account_id, type, sealed_config, send_recovery, send_failure, send_degraded, ssl_expiry,
               ssl_expiry_threshold, auto_subscribe, created_at) VALUES (?, 'EMAIL', '{"address":"a@b.test"}', 1, 1, 0, 0, 30, 0, ?) RETURNING id`,
          )
          .get(account, now) as { id: number }
      ).id;
    const own = addChannel('acc-1');
    const foreign = addChannel('acc-2');
    const gone = addChannel('acc-1');
    db.prepare('DELETE FROM alert_channels WHERE id = ?').run(gone);
    const addGroup = (id: number, subs: unknown) =>
      db
        .prepare(
          'INSERT INTO check_groups (id, account_id, name, activated, muted, concurrency, body, created_at) VALUES (?, ?, ?, 1, 0, 3, ?, ?)',
        )
        .run(
          id,
          'acc-1',
          `g${id}`,
          JSON.stringify({ name: `g${id}`, tags: ['t'], alertChannelSubscriptions: subs }),
          now,
        );
    addGroup(1, [
      { alertChannelId: own, activated: false },
      { alertChannelId: gone, activated: true },
      { alertChannelId: foreign, activated: true },
    ]);
    addGroup(2, []);
    return { own, foreign, gone };
  } finally {
    db.close();
  }
}

describe('migration 015 (group subscriptions)', () => {
  it("moves group body subscriptions into the table, skipping channels that no longer exist or are not the account's", async () => {
    const { own } = await databaseBeforeMove();
    const store = await openSqliteStore(dataDir);
    try {
      const group = await store.checkGroups.get('acc-1', 1);
      expect(group?.body).toEqual({ name: 'g1', tags: ['t'] });
      expect((await store.checkGroups.get('acc-1', 2))?.body).toEqual({ name: 'g2', tags: ['t'] });
      expect((await store.alertChannels.groupSubscriptions('acc-1', [1, 2])).get(1)).toEqual([
        { alertChannelId: own, activated: false },
      ]);
      expect((await store.alertChannels.get('acc-1', own))?.subscriptions).toMatchObject([
        { checkId: null, groupId: 1, activated: false },
      ]);
    } finally {
      await store.close();
    }
    const db = openDatabase(dataDir);
    try {
      expect(db.prepare('SELECT COUNT(*) AS n FROM alert_channel_subscriptions').get()).toEqual({ n: 1 });
      expect(db.prepare('SELECT name FROM schema_migrations WHERE version = 15').get()).toEqual({
        name: 'group-subscriptions',
      });
    } finally {
      db.close();
    }
  });
});
