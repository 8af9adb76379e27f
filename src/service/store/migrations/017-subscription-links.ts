/**
 * Double opt-in and unsubscribe links for status page subscriptions (docs/api.md "Subscriptions").
 *
 * - sp_subscriptions: `expires_at` (a PENDING one is removed after it), `confirmation_sent_at` (to
 *   rate-limit resends), and the subscription's unsubscribe token sealed, so every message can carry
 *   it without the database holding it in the clear.
 * - sp_subscription_tokens: the SHA-256 of each live link token, which is how a link finds its
 *   subscription. Confirm tokens stay valid side by side until confirmed or expired, so an older
 *   confirmation email still works after a resend.
 * - notification_outbox is rebuilt: a `kind` ('incident' or 'confirmation'), incident_update_id
 *   nullable (a confirmation belongs to no update), and the sealed tokens each message's links carry.
 *
 * Existing subscriptions get an unsubscribe token (sealed here: needs the key only when there are
 * rows). PENDING ones made before this migration were never sent a confirmation: they expire 48 hours
 * after it, the default period, unless their address subscribes again (which sends one).
 */
import { hashLinkToken, newLinkToken } from '../../subscriptions/tokens.ts';
import type { Migration, MigrationContext, MigrationDb } from './index.ts';

const LEGACY_PENDING_HOURS = 48;

export const migration017: Migration = {
  version: 17,
  name: 'subscription-links',
  async up(db: MigrationDb, context: MigrationContext) {
    await db.ddl(`
      ALTER TABLE sp_subscriptions ADD COLUMN sealed_unsubscribe_token TEXT;
      ALTER TABLE sp_subscriptions ADD COLUMN expires_at TEXT;
      ALTER TABLE sp_subscriptions ADD COLUMN confirmation_sent_at TEXT;
      CREATE INDEX sp_subscriptions_expiry ON sp_subscriptions (expires_at) WHERE expires_at IS NOT NULL;

      CREATE TABLE sp_subscription_tokens (
        token_hash       TEXT PRIMARY KEY,
        subscription_id  TEXT NOT NULL REFERENCES sp_subscriptions(id) ON DELETE CASCADE,
        purpose          TEXT NOT NULL CHECK (purpose IN ('confirm', 'unsubscribe')),
        created_at       TEXT NOT NULL
      ) STRICT;
      CREATE INDEX sp_subscription_tokens_subscription ON sp_subscription_tokens (subscription_id);
    `);
    await giveUnsubscribeTokens(db, context);
    await db.run(`UPDATE sp_subscriptions SET expires_at = ? WHERE status = 'PENDING'`, [
      new Date(Date.now() + LEGACY_PENDING_HOURS * 3_600_000).toISOString(),
    ]);
    await rebuildOutbox(db);
  },
};

async function giveUnsubscribeTokens(db: MigrationDb, context: MigrationContext): Promise<void> {
  const rows = await db.all<{ id: string }>('SELECT id FROM sp_subscriptions');
  if (rows.length === 0) return;
  if (!context.secrets) throw new Error('migration 17 must seal unsubscribe tokens, and was given no secrets key');
  const now = new Date().toISOString();
  for (const { id } of rows) {
    const token = newLinkToken();
    await db.run('UPDATE sp_subscriptions SET sealed_unsubscribe_token = ? WHERE id = ?', [
      context.secrets.seal(token),
      id,
    ]);
    await db.run(
      `INSERT INTO sp_subscription_tokens (token_hash, subscription_id, purpose, created_at) VALUES (?, ?, 'unsubscribe', ?)`,
      [hashLinkToken(token), id, now],
    );
  }
}

async function rebuildOutbox(db: MigrationDb): Promise<void> {
  await db.ddl(`
    CREATE TABLE notification_outbox_017 (
      id                        TEXT PRIMARY KEY,
      account_id                TEXT NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
      kind                      TEXT NOT NULL CHECK (kind IN ('incident', 'confirmation')),
      incident_update_id        TEXT,
      subscription_id           TEXT,
      channel                   TEXT NOT NULL CHECK (channel IN ('EMAIL', 'WEBHOOK')),
      address                   TEXT NOT NULL,
      address_key               TEXT NOT NULL,
      sealed_secret             TEXT,
      sealed_unsubscribe_token  TEXT,
      sealed_confirm_token      TEXT,
      payload                   TEXT NOT NULL,
      state                     TEXT NOT NULL CHECK (state IN ('pending', 'delivered', 'failed', 'undeliverable')),
      attempts                  INTEGER NOT NULL DEFAULT 0,
      next_attempt_at           TEXT NOT NULL,
      last_error                TEXT,
      created_at                TEXT NOT NULL,
      delivered_at              TEXT,
      UNIQUE (incident_update_id, channel, address_key)
    ) STRICT;
    INSERT INTO notification_outbox_017
      (id, account_id, kind, incident_update_id, subscription_id, channel, address, address_key, sealed_secret,
       sealed_unsubscribe_token, payload, state, attempts, next_attempt_at, last_error, created_at, delivered_at)
    SELECT o.id, o.account_id, 'incident', o.incident_update_id, o.subscription_id, o.channel, o.address, o.address_key,
       o.sealed_secret, s.sealed_unsubscribe_token, o.payload, o.state, o.attempts, o.next_attempt_at, o.last_error,
       o.created_at, o.delivered_at
    FROM notification_outbox o LEFT JOIN sp_subscriptions s ON s.id = o.subscription_id ORDER BY ${db.dialect === 'sqlite' ? 'o.rowid' : 'o.created_at'};
    DROP TABLE notification_outbox;
    ALTER TABLE notification_outbox_017 RENAME TO notification_outbox;
    CREATE INDEX notification_outbox_due ON notification_outbox (next_attempt_at) WHERE state = 'pending';
  `);
}
