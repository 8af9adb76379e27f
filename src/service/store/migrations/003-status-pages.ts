/**
 * Status pages, their services and cards, status page incidents and their updates, subscriptions,
 * and the notification outbox. `seq` columns give a stable creation order for cursor paging (never
 * OFFSET); the indexes are shaped after the statements in ../status-pages.ts, ../incidents.ts,
 * ../subscriptions.ts and ../outbox.ts.
 */
import type { Migration, MigrationDb } from './index.ts';

export const migration003: Migration = {
  version: 3,
  name: 'status-pages',
  async up(db: MigrationDb) {
    await db.ddl(`
      CREATE TABLE sp_services (
        seq         INTEGER PRIMARY KEY AUTOINCREMENT,
        id          TEXT NOT NULL UNIQUE,
        account_id  TEXT NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
        name        TEXT NOT NULL,
        created_at  TEXT NOT NULL,
        updated_at  TEXT
      ) STRICT;
      CREATE INDEX sp_services_account ON sp_services (account_id, seq);

      -- url and custom_domain are stored lower-cased; the unique indexes make them unique across
      -- all accounts and decide races between two creates.
      CREATE TABLE status_pages (
        seq            INTEGER PRIMARY KEY AUTOINCREMENT,
        id             TEXT NOT NULL UNIQUE,
        account_id     TEXT NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
        name           TEXT NOT NULL,
        url            TEXT NOT NULL UNIQUE,
        custom_domain  TEXT UNIQUE,
        theme_colors   TEXT,
        logo           TEXT,
        logo_dark      TEXT,
        redirect_to    TEXT,
        favicon        TEXT,
        default_theme  TEXT NOT NULL,
        version        REAL,
        is_private     INTEGER NOT NULL DEFAULT 0,
        created_at     TEXT NOT NULL,
        updated_at     TEXT
      ) STRICT;
      CREATE INDEX status_pages_account ON status_pages (account_id, seq);

      CREATE TABLE status_page_cards (
        id              TEXT PRIMARY KEY,
        status_page_id  TEXT NOT NULL REFERENCES status_pages(id) ON DELETE CASCADE,
        position        INTEGER NOT NULL,
        name            TEXT NOT NULL,
        created_at      TEXT NOT NULL,
        updated_at      TEXT
      ) STRICT;
      CREATE INDEX status_page_cards_page ON status_page_cards (status_page_id, position);

      CREATE TABLE status_page_card_services (
        card_id     TEXT NOT NULL REFERENCES status_page_cards(id) ON DELETE CASCADE,
        service_id  TEXT NOT NULL REFERENCES sp_services(id) ON DELETE CASCADE,
        position    INTEGER NOT NULL,
        PRIMARY KEY (card_id, service_id)
      ) STRICT;
      -- Which pages show a service: the subscribers an incident notifies.
      CREATE INDEX status_page_card_services_service ON status_page_card_services (service_id);

      -- last_update_status and duration are derived from the updates (see store/incident-state.ts)
      -- and rewritten in the same transaction as every change of the updates.
      CREATE TABLE incidents (
        seq                 INTEGER PRIMARY KEY AUTOINCREMENT,
        id                  TEXT NOT NULL UNIQUE,
        account_id          TEXT NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
        name                TEXT NOT NULL,
        severity            TEXT NOT NULL CHECK (severity IN ('CRITICAL', 'MAJOR', 'MEDIUM', 'MINOR')),
        last_update_status  TEXT NOT NULL,
        duration            INTEGER,
        created_at          TEXT NOT NULL,
        updated_at          TEXT
      ) STRICT;
      -- The incident list: newest first per account, paged by seq.
      CREATE INDEX incidents_account ON incidents (account_id, seq);

      CREATE TABLE incident_services (
        incident_id  TEXT NOT NULL REFERENCES incidents(id) ON DELETE CASCADE,
        service_id   TEXT NOT NULL REFERENCES sp_services(id) ON DELETE CASCADE,
        position     INTEGER NOT NULL,
        PRIMARY KEY (incident_id, service_id)
      ) STRICT;
      CREATE INDEX incident_services_service ON incident_services (service_id);

      CREATE TABLE incident_updates (
        seq                  INTEGER PRIMARY KEY AUTOINCREMENT,
        id                   TEXT NOT NULL UNIQUE,
        incident_id          TEXT NOT NULL REFERENCES incidents(id) ON DELETE CASCADE,
        description          TEXT NOT NULL,
        status               TEXT CHECK (status IN ('INVESTIGATING', 'IDENTIFIED', 'MONITORING', 'RESOLVED')),
        public_date          TEXT NOT NULL,
        notify_subscribers   INTEGER NOT NULL,
        created_at           TEXT NOT NULL,
        updated_at           TEXT
      ) STRICT;
      CREATE INDEX incident_updates_incident ON incident_updates (incident_id, seq);

      -- address_key is the lower-cased address: one subscription per page, type and address.
      CREATE TABLE sp_subscriptions (
        id              TEXT PRIMARY KEY,
        status_page_id  TEXT NOT NULL REFERENCES status_pages(id) ON DELETE CASCADE,
        type            TEXT NOT NULL CHECK (type IN ('EMAIL', 'WEBHOOK')),
        address         TEXT NOT NULL,
        address_key     TEXT NOT NULL,
        secret          TEXT,
        status          TEXT NOT NULL CHECK (status IN ('PENDING', 'VERIFIED')),
        created_at      TEXT NOT NULL,
        updated_at      TEXT NOT NULL,
        UNIQUE (status_page_id, type, address_key)
      ) STRICT;

      -- The durable outbox: one row per (incident update, channel, address), written in the same
      -- transaction as the update, so a committed update always has its deliveries and a delivery
      -- is queued once however often the update is saved. id is the idempotency key receivers see.
      -- The recipient (address, secret) is copied so a delivery does not depend on the
      -- subscription still existing. A worker claims a row by moving next_attempt_at past its lease,
      -- so one index serves both "due" and "lease ran out" (a crash mid-delivery retries it).
      CREATE TABLE notification_outbox (
        id                  TEXT PRIMARY KEY,
        account_id          TEXT NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
        incident_update_id  TEXT NOT NULL,
        subscription_id     TEXT,
        channel             TEXT NOT NULL CHECK (channel IN ('EMAIL', 'WEBHOOK')),
        address             TEXT NOT NULL,
        address_key         TEXT NOT NULL,
        secret              TEXT,
        payload             TEXT NOT NULL,
        state               TEXT NOT NULL CHECK (state IN ('pending', 'delivered', 'failed', 'undeliverable')),
        attempts            INTEGER NOT NULL DEFAULT 0,
        next_attempt_at     TEXT NOT NULL,
        last_error          TEXT,
        created_at          TEXT NOT NULL,
        delivered_at        TEXT,
        UNIQUE (incident_update_id, channel, address_key)
      ) STRICT;
      CREATE INDEX notification_outbox_due ON notification_outbox (next_attempt_at) WHERE state = 'pending';
    `);
  },
};
