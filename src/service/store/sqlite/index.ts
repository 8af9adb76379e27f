/**
 * The SQLite store: one database file in DATA_DIR, opened once per process, with the repositories
 * every backend shares (../assemble.ts) over SqliteDatabase (../sql/sqlite-database.ts).
 */
import type { DatabaseSync } from 'node:sqlite';
import { SecretBox } from '../../secrets/box.ts';
import {
  defaultSecretsKeyConfig,
  loadSecretsKey,
  type SecretsKeyConfig,
  secretsKeySourceOf,
} from '../../secrets/key.ts';
import { assembleStore } from '../assemble.ts';
import { MIGRATIONS, runMigrations } from '../migrations/index.ts';
import { openSqliteDatabase } from '../sql/sqlite-database.ts';
import type { Store } from '../store.ts';
import { verifySecretsMarker } from '../repos/variables.ts';

export interface SqliteStoreOptions {
  /**
   * Where the key that seals secrets comes from (src/service/secrets/key.ts). Given (the service):
   * the key is loaded and checked against the database now, so a wrong key stops the start with a
   * ConfigError. Absent (the CLI, tests): the key file in dataDir, loaded on the first secret.
   */
  secrets?: SecretsKeyConfig;
  /** A background checkpoint of the write-ahead log failed (the service logs it). */
  onCheckpointError?: (message: string) => void;
}

export async function openSqliteStore(dataDir: string, opts: SqliteStoreOptions = {}): Promise<Store> {
  const sql = openSqliteDatabase(dataDir);
  const db = sql.raw;
  let secrets: SecretBox;
  try {
    secrets = secretBoxFor(db, opts.secrets ?? defaultSecretsKeyConfig(dataDir));
    const applied = await runMigrations(sql, MIGRATIONS, { secrets });
    // A migration may have rewritten secrets (009 sealed plain ones): move the new pages into the
    // main file now, so the old page images do not linger there until some later checkpoint.
    if (applied.length > 0) db.exec('PRAGMA wal_checkpoint(TRUNCATE)');
    if (opts.secrets) secrets.ready();
  } catch (err) {
    db.close();
    throw err;
  }
  sql.checkpointInBackground(opts.onCheckpointError);
  // Closing twice (service shutdown, then test teardown) is harmless: SqliteDatabase.close checks.
  return assembleStore({ sql, secrets });
}

/** The store's SecretBox: the key loads on first use and is then checked against the database's marker. */
function secretBoxFor(db: DatabaseSync, config: SecretsKeyConfig): SecretBox {
  const box: SecretBox = new SecretBox(() => {
    const key = loadSecretsKey(config);
    // The marker check needs the key id, so it runs on a box that already has the key.
    verifySecretsMarker(db, new SecretBox(key), secretsKeySourceOf(config));
    return key;
  });
  return box;
}
