/** The raw node:sqlite connection to the service database, for tools and tests that read rows directly. */
import type { DatabaseSync } from 'node:sqlite';
import { openSqliteDatabase } from '../sql/sqlite-database.ts';

export { DB_FILE } from '../sql/sqlite-database.ts';

/** Opens (creating if needed) the database in dataDir with the service's pragmas. */
export function openDatabase(dataDir: string): DatabaseSync {
  return openSqliteDatabase(dataDir).raw;
}
