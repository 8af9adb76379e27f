/**
 * The PostgreSQL backend of the Store, chosen by DATABASE_URL (postgres://…): the same repositories
 * as SQLite's over PostgresDatabase, for installations that run several service replicas.
 *
 * The secrets key loads at open (not on the first secret, as on SQLite): checking it against the
 * database is a query, and a replica must not start with a key that cannot open what others sealed.
 */
import { SecretBox } from '../../secrets/box.ts';
import {
  defaultSecretsKeyConfig,
  loadSecretsKey,
  type SecretsKeyConfig,
  secretsKeySourceOf,
} from '../../secrets/key.ts';
import { assembleStore } from '../assemble.ts';
import { MIGRATIONS, runMigrations } from '../migrations/index.ts';
import { PostgresDatabase, type PostgresOptions } from '../sql/postgres-database.ts';
import { verifySecretsMarkerOn } from '../repos/variables.ts';
import type { Store } from '../store.ts';

export interface PostgresStoreOptions extends PostgresOptions {
  /** Where the service keeps files (the default secrets key file lives here). */
  dataDir: string;
  secrets?: SecretsKeyConfig;
}

export async function openPostgresStore(url: string, opts: PostgresStoreOptions): Promise<Store> {
  const sql = new PostgresDatabase(url, opts);
  try {
    const config = opts.secrets ?? defaultSecretsKeyConfig(opts.dataDir);
    const secrets = new SecretBox(loadSecretsKey(config));
    await runMigrations(sql, MIGRATIONS, { secrets });
    await verifySecretsMarkerOn(sql, secrets, secretsKeySourceOf(config));
    return assembleStore({ sql, secrets });
  } catch (error) {
    await sql.close();
    throw error;
  }
}
