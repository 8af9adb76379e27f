/**
 * Webhook signing secrets sealed at rest, as secret variables are (src/service/secrets/box.ts): the
 * columns become `sealed_secret`, and the values stored in plain text before are sealed here, in
 * the migration's transaction, so a database is never half sealed. Needs the key only when there
 * is something to seal.
 *
 * secure_delete zeroes the space the plain values leave behind in their pages; the store
 * checkpoints after migrating, so the old page images do not stay in the main file either.
 */
import { SEALED_PREFIX } from '../../secrets/box.ts';
import type { Migration, MigrationContext, MigrationDb } from './index.ts';

const TABLES = ['sp_subscriptions', 'notification_outbox'] as const;

export const migration009: Migration = {
  version: 9,
  name: 'sealed-webhook-secrets',
  async up(db: MigrationDb, context: MigrationContext) {
    for (const table of TABLES) await db.ddl(`ALTER TABLE ${table} RENAME COLUMN secret TO sealed_secret`);
    // A PostgreSQL database starts from migration 1 after this release, when every secret is
    // sealed as it is written: there is no plain value to seal, and no rowid or PRAGMA there.
    if (db.dialect !== 'sqlite') return;
    const { secure_delete: before } = (await db.get('PRAGMA secure_delete')) as { secure_delete: number };
    await db.ddl('PRAGMA secure_delete = ON');
    try {
      for (const table of TABLES) await sealPlainSecrets(db, table, context);
    } finally {
      await db.ddl(`PRAGMA secure_delete = ${before}`);
    }
  },
};

async function sealPlainSecrets(
  db: MigrationDb,
  table: (typeof TABLES)[number],
  context: MigrationContext,
): Promise<void> {
  const rows = await db.all<{ id: number; plain: string }>(
    `SELECT rowid AS id, sealed_secret AS plain FROM ${table} WHERE sealed_secret IS NOT NULL AND sealed_secret NOT LIKE ?`,
    [`${SEALED_PREFIX}%`],
  );
  if (rows.length === 0) return;
  if (!context.secrets)
    throw new Error(`migration 9 must seal the webhook secrets in ${table}, and was given no secrets key`);
  for (const row of rows)
    await db.run(`UPDATE ${table} SET sealed_secret = ? WHERE rowid = ?`, [context.secrets.seal(row.plain), row.id]);
}
