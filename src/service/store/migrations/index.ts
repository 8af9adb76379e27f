/**
 * A small versioned migration runner, and the one list of migrations both databases run. Each
 * migration runs once, in version order, in its own transaction together with the row that records
 * it, so a crash mid-migration leaves the database at the previous version rather than half-migrated
 * (PostgreSQL's schema changes are transactional too).
 *
 * Migrations are written in SQLite's dialect; `ddl` translates schema changes for PostgreSQL
 * (../sql/postgres-ddl.ts), and what does not translate a migration writes per `dialect`.
 */
import type { SecretBox } from '../../secrets/box.ts';
import { nowIso, READ_COMMITTED, type SqlDatabase, type SqlExecutor } from '../sql/database.ts';
import { toPostgresDdl } from '../sql/postgres-ddl.ts';
import { migration001 } from './001-core.ts';
import { migration002 } from './002-dispatch.ts';
import { migration003 } from './003-status-pages.ts';
import { migration004 } from './004-heartbeats-dashboards.ts';
import { migration005 } from './005-check-groups.ts';
import { migration006 } from './006-runtimes.ts';
import { migration007 } from './007-variables-snippets.ts';
import { migration008 } from './008-artifacts.ts';
import { migration009 } from './009-sealed-webhook-secrets.ts';
import { migration010 } from './010-alert-channels.ts';
import { migration011 } from './011-maintenance-windows.ts';
import { migration012 } from './012-check-statuses.ts';
import { migration013 } from './013-alert-notifications.ts';
import { migration014 } from './014-reminders.ts';
import { migration015 } from './015-group-subscriptions.ts';
import { migration016 } from './016-status-page-web.ts';
import { migration017 } from './017-subscription-links.ts';
import { migration018 } from './018-check-stats.ts';
import { migration019 } from './019-console-sessions.ts';
import { migration020 } from './020-account-settings.ts';
import { migration021 } from './021-status-page-versions.ts';
import { migration022 } from './022-location-metrics.ts';
import { migration023 } from './023-insertion-order.ts';
import { migration024 } from './024-runs-by-pair.ts';
import { migration026 } from './026-run-start-deadline.ts';
import { migration028 } from './028-cascade-indexes.ts';
import { migration029 } from './029-results-indexes.ts';
import { migration030 } from './030-check-triggers.ts';
import { migration031 } from './031-check-sessions.ts';
import { migration032 } from './032-analytics-rollups.ts';
import { migration033 } from './033-client-certificates.ts';
import { migration034 } from './034-schedule-cursors.ts';

/** What a migration may need besides the database: the key, for one that seals stored values. */
export interface MigrationContext {
  secrets?: SecretBox;
}

/** The database as a migration sees it: statements, the dialect, and schema changes in SQLite's dialect. */
export interface MigrationDb extends SqlExecutor {
  readonly dialect: SqlDatabase['dialect'];
  /** Runs schema statements written for SQLite, translated when the database is PostgreSQL. */
  ddl(sql: string): Promise<void>;
}

export interface Migration {
  version: number;
  name: string;
  up(db: MigrationDb, context: MigrationContext): Promise<void>;
}

/** Every migration the service knows, in order. New ones are appended, never edited once released. */
export const MIGRATIONS: readonly Migration[] = [
  migration001,
  migration002,
  migration003,
  migration004,
  migration005,
  migration006,
  migration007,
  migration008,
  migration009,
  migration010,
  migration011,
  migration012,
  migration013,
  migration014,
  migration015,
  migration016,
  migration017,
  migration018,
  migration019,
  migration020,
  migration021,
  migration022,
  migration023,
  migration024,
  migration026,
  migration028,
  migration029,
  migration030,
  migration031,
  migration032,
  migration033,
  migration034,
];

/**
 * An arbitrary constant: the PostgreSQL advisory lock replicas starting at once take around each
 * migration, so one applies it and the others find it applied.
 */
const MIGRATION_LOCK = 7_346_001;

/** Applies the migrations not yet recorded in schema_migrations; returns the versions applied. */
export async function runMigrations(
  db: SqlDatabase,
  migrations: readonly Migration[] = MIGRATIONS,
  context: MigrationContext = {},
): Promise<number[]> {
  assertOrdered(migrations);
  await db.exec(`CREATE TABLE IF NOT EXISTS schema_migrations (
    version    INTEGER PRIMARY KEY,
    name       TEXT NOT NULL,
    applied_at TEXT NOT NULL
  )`);
  const applied: number[] = [];
  for (const migration of migrations) {
    if (await applyOnce(db, migration, context)) applied.push(migration.version);
  }
  return applied;
}

/** The migrations of `migrations` that the database has not recorded as applied. */
export async function pendingMigrations(
  db: SqlExecutor,
  migrations: readonly Migration[] = MIGRATIONS,
): Promise<Migration[]> {
  const rows = await db.all<{ version: number }>('SELECT version FROM schema_migrations');
  const applied = new Set(rows.map((row) => row.version));
  return migrations.filter((m) => !applied.has(m.version));
}

/**
 * Checked inside the transaction, under the write lock (SQLite's BEGIN IMMEDIATE, PostgreSQL's
 * advisory lock), so two processes opening the same database at once cannot both apply it. Read
 * committed on PostgreSQL: the check must see a migration another replica committed while this one
 * waited for the lock.
 */
async function applyOnce(db: SqlDatabase, migration: Migration, context: MigrationContext): Promise<boolean> {
  return db.transaction(async () => {
    if (db.dialect === 'postgres') await db.get('SELECT pg_advisory_xact_lock(?)', [MIGRATION_LOCK]);
    if (await db.get('SELECT 1 AS done FROM schema_migrations WHERE version = ?', [migration.version])) return false;
    await migration.up(migrationDb(db), context);
    await db.run('INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)', [
      migration.version,
      migration.name,
      nowIso(),
    ]);
    return true;
  }, READ_COMMITTED);
}

function migrationDb(db: SqlDatabase): MigrationDb {
  return {
    dialect: db.dialect,
    all: (sql, params) => db.all(sql, params),
    get: (sql, params) => db.get(sql, params),
    run: (sql, params) => db.run(sql, params),
    ddl: (sql) => db.exec(db.dialect === 'postgres' ? toPostgresDdl(sql) : sql),
  };
}

function assertOrdered(migrations: readonly Migration[]): void {
  migrations.forEach((m, i) => {
    const prev = migrations[i - 1];
    if (prev && m.version <= prev.version) {
      throw new Error(`migration ${m.version} (${m.name}) is out of order after ${prev.version} (${prev.name})`);
    }
  });
}
