/**
 * Migration 017: subscriptions made before double opt-in get an unsubscribe token (so the next
 * email they get carries a working link), PENDING ones get an expiry, and queued deliveries keep
 * going out, now as 'incident' messages carrying their subscription's unsubscribe token.
 */
import { describe, expect, it } from 'vitest';
import { SEALED_PREFIX } from '../../src/service/secrets/box.ts';
import { openDatabase } from '../../src/service/store/sqlite/db.ts';
import { openSqliteStore } from '../../src/service/store/sqlite/index.ts';
import { hashLinkToken } from '../../src/service/subscriptions/tokens.ts';
import { sqliteDatabaseBefore, tempDataDirEachTest } from '../support/sqlite-before-migration.ts';

const currentDataDir = tempDataDirEachTest();

const then = '2026-01-01T00:00:00.000Z';

/** A database as versions before 017 left it: a verified and a pending subscriber, one delivery queued. */
function databaseBefore017(): Promise<void> {
  return sqliteDatabaseBefore(currentDataDir(), 17, (db) => {
    db.prepare('INSERT INTO accounts (id, name, created_at) VALUES (?, ?, ?)').run('acc-1', 'Acme', then);
    db.prepare(
      `INSERT INTO status_pages (id, account_id, name, url, default_theme, created_at) VALUES ('page-1', 'acc-1', 'Acme', 'acme', 'AUTO', ?)`,
    ).run(then);
    const subscribe = db.prepare(
      `INSERT INTO sp_subscriptions (id, status_page_id, type, address, address_key, status, created_at, updated_at)
       VALUES (?, 'page-1', 'EMAIL', ?, ?, ?, ?, ?)`,
    );
    subscribe.run('sub-verified', 'ops@acme.test', 'ops@acme.test', 'VERIFIED', then, then);
    subscribe.run('sub-pending', 'new@acme.test', 'new@acme.test', 'PENDING', then, then);
    db.prepare(
      `INSERT INTO notification_outbox (id, account_id, incident_update_id, subscription_id, channel, address, address_key, payload,
         state, attempts, next_attempt_at, created_at) VALUES ('delivery-1', 'acc-1', 'update-1', 'sub-verified', 'EMAIL', 'ops@acme.test',
         'ops@acme.test', '{"incident":{"name":"Slow"}}', 'pending', 0, ?, ?)`,
    ).run(then, then);
  });
}

describe('migration 017 (subscription links)', () => {
  it('gives existing subscriptions unsubscribe links, PENDING ones an expiry, and keeps queued deliveries', async () => {
    const dataDir = currentDataDir();
    await databaseBefore017();
    const migratedAt = Date.now();
    let token = '';
    const store = await openSqliteStore(dataDir);
    try {
      const [delivery, ...more] = await store.outbox.claimDue(new Date(), 10, 60_000);
      expect(more).toEqual([]);
      expect(delivery).toMatchObject({
        id: 'delivery-1',
        kind: 'incident',
        address: 'ops@acme.test',
        payload: { incident: { name: 'Slow' } },
        confirmToken: null,
      });
      token = delivery?.unsubscribeToken as string;
      expect(token).toMatch(/^[A-Za-z0-9_-]{43}$/);

      const hour = 3_600_000;
      expect(await store.subscriptions.deleteExpired(new Date(migratedAt + 47 * hour))).toBe(0);
      expect(await store.subscriptions.deleteExpired(new Date(migratedAt + 49 * hour))).toBe(1);
      expect((await store.subscriptions.unsubscribe(token))?.subscription).toMatchObject({
        id: 'sub-verified',
        address: 'ops@acme.test',
      });
      expect(await store.subscriptions.list('acc-1', 'page-1')).toEqual([]);
    } finally {
      await store.close();
    }
    const db = openDatabase(dataDir);
    try {
      // The token is stored sealed (for the messages) and hashed (for the lookup), never in the clear.
      const sealed = db.prepare('SELECT sealed_unsubscribe_token AS s FROM notification_outbox').get() as { s: string };
      expect(sealed.s.startsWith(SEALED_PREFIX)).toBe(true);
      expect(sealed.s).not.toContain(token);
      expect(
        db.prepare('SELECT COUNT(*) AS n FROM sp_subscription_tokens WHERE token_hash = ?').get(hashLinkToken(token)),
      ).toEqual({ n: 0 });
      expect(db.prepare('SELECT name FROM schema_migrations WHERE version = 17').get()).toEqual({
        name: 'subscription-links',
      });
    } finally {
      db.close();
    }
  });
});
