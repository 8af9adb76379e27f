/**
 * Client certificates (/v1/client-certificates): a PEM certificate and private key an account's
 * checks present for mutual TLS, matched to a target by `host` (docs/api.md "Client certificates").
 * The private key and its passphrase are stored sealed (src/service/secrets/box.ts); the certificate
 * and the optional CA are public material and stored as given. Certificates cannot be edited.
 */
import type { Migration, MigrationDb } from './index.ts';

export const migration033: Migration = {
  version: 33,
  name: 'client-certificates',
  async up(db: MigrationDb) {
    await db.ddl(`
      CREATE TABLE client_certificates (
        id                 TEXT PRIMARY KEY,
        account_id         TEXT NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
        host               TEXT NOT NULL,
        cert               TEXT NOT NULL,
        ca                 TEXT,
        sealed_key         TEXT NOT NULL,
        sealed_passphrase  TEXT,
        created_at         TEXT NOT NULL
      ) STRICT;
      CREATE INDEX client_certificates_by_account ON client_certificates (account_id, created_at);
    `);
  },
};
