/**
 * Opens the Store the configuration names: PostgreSQL when DATABASE_URL is a postgres:// URL, else
 * SQLite in DATA_DIR. The service and every CLI command that touches data open it here, so
 * `outpost account create` writes where the running replicas read.
 */
import type { DatabaseConfig } from '../database-url.ts';
import type { SecretsKeyConfig } from '../secrets/key.ts';
import { openPostgresStore } from './postgres/index.ts';
import { openSqliteStore } from './sqlite/index.ts';
import type { Store } from './store.ts';

export interface OpenStoreConfig {
  database?: DatabaseConfig;
  dataDir: string;
  /** Where the secrets key comes from; absent: the key file in dataDir (the CLI, tests). */
  secrets?: SecretsKeyConfig;
  /** SQLite: a background checkpoint of the write-ahead log failed. */
  onCheckpointError?: (message: string) => void;
}

export function openStore(config: OpenStoreConfig): Promise<Store> {
  const database = config.database ?? { kind: 'sqlite' };
  if (database.kind === 'postgres') {
    return openPostgresStore(database.url, {
      dataDir: config.dataDir,
      ...(config.secrets ? { secrets: config.secrets } : {}),
    });
  }
  return openSqliteStore(config.dataDir, {
    ...(config.secrets ? { secrets: config.secrets } : {}),
    ...(config.onCheckpointError ? { onCheckpointError: config.onCheckpointError } : {}),
  });
}
