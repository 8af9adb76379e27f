/**
 * What the public status pages need: the page's description and white-label flag (isPrivate exists
 * since 003), its reader keys (hashed like API and location keys), and the incident's start (the
 * public date of its first update) so the 90-day history and the history pages read one index.
 */
import type { Migration, MigrationDb } from './index.ts';

export const migration016: Migration = {
  version: 16,
  name: 'status-page-web',
  async up(db: MigrationDb) {
    await db.ddl(`
      ALTER TABLE status_pages ADD COLUMN description TEXT;
      ALTER TABLE status_pages ADD COLUMN white_label INTEGER NOT NULL DEFAULT 0;

      CREATE TABLE status_page_keys (
        id              TEXT PRIMARY KEY,
        status_page_id  TEXT NOT NULL REFERENCES status_pages(id) ON DELETE CASCADE,
        key_hash        TEXT NOT NULL UNIQUE,
        masked_key      TEXT NOT NULL,
        created_at      TEXT NOT NULL,
        updated_at      TEXT
      ) STRICT;
      CREATE INDEX status_page_keys_page ON status_page_keys (status_page_id, created_at);

      -- started_at is derived from the updates (store/incident-state.ts) like last_update_status.
      ALTER TABLE incidents ADD COLUMN started_at TEXT;
      UPDATE incidents SET started_at = COALESCE(
        (SELECT MIN(u.public_date) FROM incident_updates u WHERE u.incident_id = incidents.id), created_at);
      -- A page's history: its account's incidents by start, newest first; open ones apart (few).
      CREATE INDEX incidents_account_started ON incidents (account_id, started_at, seq);
      CREATE INDEX incidents_account_open ON incidents (account_id, seq) WHERE last_update_status <> 'RESOLVED';
      -- Which incidents touch a service, without a lookup of the link row.
      CREATE INDEX incident_services_service_incident ON incident_services (service_id, incident_id);
    `);
  },
};
