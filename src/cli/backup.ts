/** `outpost backup FILE [--force]`: a consistent copy of the live SQLite database (src/service/backup.ts). */
import path from 'node:path';
import { ConfigError, EXIT } from '../shared/errors.ts';
import type { Env } from '../shared/env.ts';
import { backupSqlite, secretsKeyNote } from '../service/backup.ts';
import { loadServiceConfig } from '../service/config.ts';

export async function runBackup(env: Env, file: string, force: boolean): Promise<number> {
  const config = loadServiceConfig(env);
  if (config.database?.kind === 'postgres') {
    throw new ConfigError(
      'DATABASE_URL',
      'outpost backup copies the SQLite database of DATA_DIR; with DATABASE_URL the data is in PostgreSQL: back it up with pg_dump -Fc (docs/operations.md)',
    );
  }
  const backup = backupSqlite({ dataDir: config.dataDir, file: path.resolve(file), overwrite: force });
  process.stdout.write(`${JSON.stringify(backup)}\n`);
  const note = config.secrets && secretsKeyNote(config.secrets);
  if (note) process.stderr.write(`outpost: note: ${note}\n`);
  return EXIT.ok;
}
