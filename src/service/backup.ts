/**
 * A consistent copy of the live SQLite database (`outpost backup FILE`, docs/operations.md).
 *
 * `VACUUM INTO` rather than node:sqlite's `backup()`: VACUUM INTO reads the whole database inside one
 * read transaction, so the copy is the snapshot of one instant, and in WAL mode the service's writes
 * go on meanwhile. `backup()` copies in steps and starts over whenever another process writes between
 * two steps, so under the service's steady stream of results it may never finish. VACUUM INTO also
 * writes a compact file (no free pages) in rollback-journal mode: one self-contained file, no -wal.
 *
 * The copy is written beside the destination under a temporary name, checked with
 * `PRAGMA integrity_check`, flushed to disk (SQLite does not fsync VACUUM INTO's output) and only
 * then moved into place, so FILE is never a half-written database.
 */
import { randomUUID } from 'node:crypto';
import {
  closeSync,
  existsSync,
  fsyncSync,
  linkSync,
  openSync,
  realpathSync,
  renameSync,
  rmSync,
  statSync,
} from 'node:fs';
import path from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { ConfigError } from '../shared/errors.ts';
import type { SecretsKeyConfig } from './secrets/key.ts';
import { DB_FILE } from './store/sqlite/db.ts';

export interface SqliteBackupRequest {
  /** DATA_DIR of the service whose database is copied. */
  dataDir: string;
  /** Where the copy goes (absolute). */
  file: string;
  /** Replace `file` when it exists (--force). */
  overwrite: boolean;
}

export interface SqliteBackup {
  file: string;
  bytes: number;
}

/** The copy was written but SQLite found it damaged; it was removed and FILE left as it was. */
export class BackupIntegrityError extends Error {
  override readonly name = 'BackupIntegrityError';
}

/** How long the copy waits for a lock the service holds (a checkpoint) before giving up. */
const BUSY_TIMEOUT_MS = 10_000;

export function backupSqlite(request: SqliteBackupRequest): SqliteBackup {
  const source = liveDatabase(request.dataDir);
  checkDestination(request, source);
  const partial = path.join(path.dirname(request.file), `.${path.basename(request.file)}.${randomUUID()}.partial`);
  try {
    vacuumInto(source, partial);
    verifyIntegrity(partial);
    flushToDisk(partial);
    moveIntoPlace(partial, request);
  } finally {
    rmSync(partial, { force: true });
  }
  flushToDisk(path.dirname(request.file));
  return { file: request.file, bytes: statSync(request.file).size };
}

function liveDatabase(dataDir: string): string {
  const source = path.join(dataDir, DB_FILE);
  if (!existsSync(source)) {
    throw new ConfigError(
      'DATA_DIR',
      `DATA_DIR=${dataDir} has no ${DB_FILE} to back up; set DATA_DIR to the service's data folder`,
    );
  }
  return source;
}

function checkDestination({ file, overwrite }: SqliteBackupRequest, source: string): void {
  const folder = path.dirname(file);
  if (!existsSync(folder))
    throw new ConfigError('FILE', `FILE ${file}: the folder ${folder} does not exist; create it first`);
  if (!existsSync(file)) return;
  if (realpathSync(file) === realpathSync(source)) {
    throw new ConfigError('FILE', `FILE ${file} is the live database itself; write the backup to another file`);
  }
  if (!statSync(file).isFile())
    throw new ConfigError('FILE', `FILE ${file} exists and is not a file; choose a file name`);
  if (!overwrite) throw alreadyExists(file);
}

function alreadyExists(file: string): ConfigError {
  return new ConfigError('FILE', `FILE ${file} already exists; choose a new file, or pass --force to replace it`);
}

function vacuumInto(source: string, target: string): void {
  // Read-only: the backup never writes to the live database, whatever happens.
  const db = new DatabaseSync(source, { readOnly: true });
  try {
    db.exec(`PRAGMA busy_timeout = ${BUSY_TIMEOUT_MS}`);
    db.prepare('VACUUM INTO ?').run(target);
  } finally {
    db.close();
  }
}

function verifyIntegrity(file: string): void {
  const db = new DatabaseSync(file, { readOnly: true });
  try {
    const rows = db.prepare('PRAGMA integrity_check').all() as Array<{ integrity_check: string }>;
    const problems = rows.map((row) => row.integrity_check).filter((line) => line !== 'ok');
    if (problems.length > 0)
      throw new BackupIntegrityError(`the copy failed PRAGMA integrity_check: ${problems.slice(0, 5).join('; ')}`);
  } finally {
    db.close();
  }
}

function flushToDisk(file: string): void {
  const fd = openSync(file, 'r');
  try {
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}

/** rename replaces (--force); link never does, so a file that appeared meanwhile is not clobbered. */
function moveIntoPlace(partial: string, { file, overwrite }: SqliteBackupRequest): void {
  if (overwrite) {
    renameSync(partial, file);
    return;
  }
  try {
    linkSync(partial, file);
  } catch (err) {
    throw (err as NodeJS.ErrnoException).code === 'EEXIST' ? alreadyExists(file) : err;
  }
}

/**
 * What the backup leaves out on purpose: the key that seals secrets. A copy holding both the sealed
 * values and their key would hand out every secret to whoever reads the backup, so the key is kept
 * (and backed up) apart; without it a restored database cannot open its sealed secrets.
 */
export function secretsKeyNote(secrets: SecretsKeyConfig): string | undefined {
  if (secrets.key !== undefined) {
    return 'the backup does not hold SECRETS_KEY; a restore needs the same SECRETS_KEY to open sealed secrets';
  }
  if (!existsSync(secrets.keyFile)) return undefined;
  return `the backup does not hold the secrets key ${secrets.keyFile}; back it up separately, kept apart from the database backups: a restore needs it to open sealed secrets`;
}
