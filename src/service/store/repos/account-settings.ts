import { type AccountSettings, type AccountSettingsRepo, DEFAULT_ACCOUNT_SETTINGS } from '../account-settings-types.ts';
import { nowIso, type SqlDatabase } from '../sql/database.ts';

export class SqlAccountSettingsRepo implements AccountSettingsRepo {
  readonly #db: SqlDatabase;
  constructor(db: SqlDatabase) {
    this.#db = db;
  }

  async get(accountId: string): Promise<AccountSettings> {
    const row = await this.#db.get<{ badges_enabled: number }>(
      'SELECT badges_enabled FROM account_settings WHERE account_id = ?',
      [accountId],
    );
    return row ? { badgesEnabled: row.badges_enabled === 1 } : { ...DEFAULT_ACCOUNT_SETTINGS };
  }

  async put(accountId: string, settings: AccountSettings): Promise<AccountSettings> {
    await this.#db.run(
      `INSERT INTO account_settings (account_id, badges_enabled, updated_at) VALUES (?, ?, ?)
       ON CONFLICT (account_id) DO UPDATE SET badges_enabled = excluded.badges_enabled, updated_at = excluded.updated_at`,
      [accountId, settings.badgesEnabled ? 1 : 0, nowIso()],
    );
    return this.get(accountId);
  }
}
