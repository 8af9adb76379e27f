/**
 * A small versioned migration runner. Each migration runs once, in version order, in its own
 * transaction together with the row that records it, so a crash mid-migration leaves the database
 * at the previous version rather than half-migrated.
 */
import type { DatabaseSync } from 'node:sqlite';
import type { SecretBox } from '../../../secrets/box.ts';
import { inTransaction, nowIso } from '../db.ts';
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

/** What a migration may need besides the database: the key, for one that seals stored values. */
export interface MigrationContext {
  secrets?: SecretBox;
}

export interface Migration {
  version: number;
  name: string;
  up(db: DatabaseSync, context: MigrationContext): void;
}

/** Every migration the service knows, in order. New ones are appended, never edited once released. */
export const MIGRATIONS: readonly Migration[] = [migration001, migration002, migration003, migration004, migration005, migration006, migration007, migration008, migration009, migration010, migration011, migration012, migration013, migration014, migration015, migration016, migration017, migration018, migration019, migration020, migration021];

/** Applies the migrations not yet recorded in schema_migrations; returns the versions applied. */
export function runMigrations(db: DatabaseSync, migrations: readonly Migration[] = MIGRATIONS, context: MigrationContext = {}): number[] {
  assertOrdered(migrations);
  db.exec(`CREATE TABLE IF NOT EXISTS schema_migrations (
    version    INTEGER PRIMARY KEY,
    name       TEXT NOT NULL,
    applied_at TEXT NOT NULL
  )`);
  const applied: number[] = [];
  for (const migration of migrations) {
    // Checked inside the transaction (which holds the write lock) so two processes opening the
    // same data directory at once cannot both apply a migration.
    const ran = inTransaction(db, () => {
      const done = db.prepare('SELECT 1 FROM schema_migrations WHERE version = ?').get(migration.version);
      if (done) return false;
      migration.up(db, context);
      db.prepare('INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)').run(
        migration.version,
        migration.name,
        nowIso(),
      );
      return true;
    });
    if (ran) applied.push(migration.version);
  }
  return applied;
}

/** The migrations of `migrations` that the database has not recorded as applied. */
export function pendingMigrations(db: DatabaseSync, migrations: readonly Migration[] = MIGRATIONS): Migration[] {
  const rows = db.prepare('SELECT version FROM schema_migrations').all() as Array<{ version: number }>;
  const applied = new Set(rows.map((row) => row.version));
  return migrations.filter((m) => !applied.has(m.version));
}

function assertOrdered(migrations: readonly Migration[]): void {
  migrations.forEach((m, i) => {
    const prev = migrations[i - 1];
    if (prev && m.version <= prev.version) {
      throw new Error(`migration ${m.version} (${m.name}) is out of order after ${prev.version} (${prev.name})`);
    }
  });
}
