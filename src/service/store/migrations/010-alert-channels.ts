/**
 * Alert channels and their subscriptions. A channel's config is JSON with its secret fields sealed
 * (src/service/alert-channels/channel-secrets.ts). Subscriptions cascade away with their channel,
 * check or group, so none ever points at something deleted.
 */
import type { Migration, MigrationDb } from './index.ts';

export const migration010: Migration = {
  version: 10,
  name: 'alert-channels',
  async up(db: MigrationDb) {
    await db.ddl(`
      CREATE TABLE alert_channels (
        id                   INTEGER PRIMARY KEY AUTOINCREMENT,
        account_id           TEXT NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
        type                 TEXT NOT NULL,
        sealed_config        TEXT NOT NULL,
        send_recovery        INTEGER NOT NULL,
        send_failure         INTEGER NOT NULL,
        send_degraded        INTEGER NOT NULL,
        ssl_expiry           INTEGER NOT NULL,
        ssl_expiry_threshold INTEGER NOT NULL,
        auto_subscribe       INTEGER NOT NULL,
        created_at           TEXT NOT NULL,
        updated_at           TEXT
      );
      CREATE INDEX alert_channels_account ON alert_channels(account_id, id);
      CREATE INDEX alert_channels_auto ON alert_channels(account_id) WHERE auto_subscribe = 1;
      CREATE TABLE alert_channel_subscriptions (
        id         INTEGER PRIMARY KEY AUTOINCREMENT,
        channel_id INTEGER NOT NULL REFERENCES alert_channels(id) ON DELETE CASCADE,
        check_id   TEXT REFERENCES checks(id) ON DELETE CASCADE,
        group_id   INTEGER REFERENCES check_groups(id) ON DELETE CASCADE,
        activated  INTEGER NOT NULL,
        CHECK ((check_id IS NULL) <> (group_id IS NULL)),
        UNIQUE (channel_id, check_id),
        UNIQUE (channel_id, group_id)
      );
      CREATE INDEX alert_channel_subscriptions_check ON alert_channel_subscriptions(check_id);
      CREATE INDEX alert_channel_subscriptions_group ON alert_channel_subscriptions(group_id);
    `);
  },
};
