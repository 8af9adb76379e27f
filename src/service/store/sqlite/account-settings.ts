import type { DatabaseSync } from 'node:sqlite';
import { type AccountSettings, type AccountSettingsRepo, DEFAULT_ACCOUNT_SETTINGS } from '../account-settings-types.ts';
import { nowIso } from './db.ts';

export class SqliteAccountSettingsRepo implements AccountSettingsRepo {
  readonly #db: DatabaseSync;
  constructor(db: DatabaseSync) {
    this.#db = db;
  }

  async get(accountId: string): Promise<AccountSettings> {
    const row = this.#db.prepare('SELECT badges_enabled FROM account_settings WHERE account_id = ?').get(accountId) as
      | { badges_enabled: number }
      | undefined;
    return row ? { badgesEnabled: row.badges_enabled === 1 } : { ...DEFAULT_ACCOUNT_SETTINGS };
  }

  async put(accountId: string, settings: AccountSettings): Promise<AccountSettings> {
    this.#db
      .prepare(
        `INSERT INTO account_settings (account_id, badges_enabled, updated_at) VALUES (?, ?, ?)
         ON CONFLICT (account_id) DO UPDATE SET badges_enabled = excluded.badges_enabled, updated_at = excluded.updated_at`,
      )
      .run(accountId, settings.badgesEnabled ? 1 : 0, nowIso());
    return this.get(accountId);
  }
}
