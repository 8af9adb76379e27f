import { randomBytes } from 'node:crypto';
import type { CheckTrigger, CheckTriggerRepo } from '../check-trigger-types.ts';
import { nowIso, type SqlDatabase } from '../sql/database.ts';

interface TriggerRow {
  id: number;
  check_id: string;
  token: string;
  created_at: string;
  called_at: string | null;
  updated_at: string | null;
}

const toTrigger = (row: TriggerRow): CheckTrigger => ({
  id: row.id,
  checkId: row.check_id,
  token: row.token,
  createdAt: row.created_at,
  calledAt: row.called_at,
  updatedAt: row.updated_at,
});

export class SqlCheckTriggerRepo implements CheckTriggerRepo {
  readonly #db: SqlDatabase;
  constructor(db: SqlDatabase) {
    this.#db = db;
  }

  async get(accountId: string, checkId: string): Promise<CheckTrigger | undefined> {
    const row = await this.#db.get<TriggerRow>('SELECT * FROM check_triggers WHERE check_id = ? AND account_id = ?', [
      checkId,
      accountId,
    ]);
    return row && toTrigger(row);
  }

  async ensure(accountId: string, checkId: string): Promise<{ trigger: CheckTrigger; created: boolean }> {
    return this.#db.transaction(async () => {
      const existing = await this.get(accountId, checkId);
      if (existing) return { trigger: existing, created: false };
      // 32 random bytes, as a group trigger's: the token alone authorizes running the check.
      const token = randomBytes(32).toString('base64url');
      // A trigger another replica created meanwhile: on PostgreSQL DO NOTHING meets it as a
      // serialization failure, and the transaction runs again and finds it.
      const row = await this.#db.get<TriggerRow>(
        `INSERT INTO check_triggers (check_id, account_id, token, created_at) VALUES (?, ?, ?, ?)
         ON CONFLICT (check_id) DO NOTHING RETURNING *`,
        [checkId, accountId, token, nowIso()],
      );
      if (!row) throw new Error(`the trigger of check ${checkId} appeared while it was created`);
      return { trigger: toTrigger(row), created: true };
    });
  }

  async delete(accountId: string, checkId: string): Promise<boolean> {
    return (
      (await this.#db.run('DELETE FROM check_triggers WHERE check_id = ? AND account_id = ?', [checkId, accountId]))
        .changes > 0
    );
  }

  async call(checkId: string, token: string, now: string): Promise<{ accountId: string } | undefined> {
    const row = await this.#db.get<{ account_id: string }>(
      'UPDATE check_triggers SET called_at = ? WHERE check_id = ? AND token = ? RETURNING account_id',
      [now, checkId, token],
    );
    return row && { accountId: row.account_id };
  }
}
