/**
 * Webhook signing secrets sealed at rest, as secret variables are (src/service/secrets/box.ts): the
 * columns become `sealed_secret`, and the values stored in plain text before are sealed here, in
 * the migration's transaction, so a database is never half sealed. Needs the key only when there
 * is something to seal.
 *
 * secure_delete zeroes the space the plain values leave behind in their pages; the store
 * checkpoints after migrating, so the old page images do not stay in the main file either.
 */
import type { DatabaseSync } from 'node:sqlite';
import { SEALED_PREFIX } from '../../../secrets/box.ts';
import type { Migration, MigrationContext } from './index.ts';

const TABLES = ['sp_subscriptions', 'notification_outbox'] as const;

export const migration009: Migration = {
  version: 9,
  name: 'sealed-webhook-secrets',
  up(db: DatabaseSync, context: MigrationContext) {
    for (const table of TABLES) db.exec(`ALTER TABLE ${table} RENAME COLUMN secret TO sealed_secret`);
    const { secure_delete: before } = db.prepare('PRAGMA secure_delete').get() as { secure_delete: number };
    db.exec('PRAGMA secure_delete = ON');
    try {
      for (const table of TABLES) sealPlainSecrets(db, table, context);
    } finally {
      db.exec(`PRAGMA secure_delete = ${before}`);
    }
  },
};

function sealPlainSecrets(db: DatabaseSync, table: (typeof TABLES)[number], context: MigrationContext): void {
  const rows = db
    .prepare(`SELECT rowid AS id, sealed_secret AS plain FROM ${table} WHERE sealed_secret IS NOT NULL AND sealed_secret NOT LIKE ?`)
    .all(`${SEALED_PREFIX}%`) as Array<{ id: number; plain: string }>;
  if (rows.length === 0) return;
  if (!context.secrets) throw new Error(`migration 9 must seal the webhook secrets in ${table}, and was given no secrets key`);
  const update = db.prepare(`UPDATE ${table} SET sealed_secret = ? WHERE rowid = ?`);
  for (const row of rows) update.run(context.secrets.seal(row.plain), row.id);
}
