/**
 * The rows of a trigger table, one per target: check_triggers (a check's, keyed by check_id) and
 * check_group_triggers (a group's, keyed by group_id). Each holds the token of the target's trigger
 * URL; the repos (check-triggers.ts, check-groups.ts) turn rows into their own records.
 */
import { randomBytes } from 'node:crypto';
import { nowIso, type SqlDatabase } from '../sql/database.ts';

/** Which table, its target column, and how an error names a target (`check group 7`). */
export interface TriggerTable<K> {
  table: 'check_triggers' | 'check_group_triggers';
  target: 'check_id' | 'group_id';
  describe(target: K): string;
}

export class TriggerTokens<K extends string | number, Row, Trigger> {
  readonly #db: SqlDatabase;
  readonly #spec: TriggerTable<K>;
  readonly #toTrigger: (row: Row) => Trigger;

  constructor(db: SqlDatabase, spec: TriggerTable<K>, toTrigger: (row: Row) => Trigger) {
    this.#db = db;
    this.#spec = spec;
    this.#toTrigger = toTrigger;
  }

  async get(accountId: string, target: K): Promise<Trigger | undefined> {
    const { table, target: column } = this.#spec;
    const row = await this.#db.get<Row>(`SELECT * FROM ${table} WHERE ${column} = ? AND account_id = ?`, [
      target,
      accountId,
    ]);
    return row && this.#toTrigger(row);
  }

  /** The target's trigger, created when there is none (`created` says which). */
  async ensure(accountId: string, target: K): Promise<{ trigger: Trigger; created: boolean }> {
    const { table, target: column } = this.#spec;
    return this.#db.transaction(async () => {
      const existing = await this.get(accountId, target);
      if (existing) return { trigger: existing, created: false };
      // 32 random bytes: the token alone authorizes running the target, like an API key.
      const token = randomBytes(32).toString('base64url');
      // A trigger another replica created meanwhile: on PostgreSQL DO NOTHING meets it as a
      // serialization failure, and the transaction runs again and finds it.
      const row = await this.#db.get<Row>(
        `INSERT INTO ${table} (${column}, account_id, token, created_at) VALUES (?, ?, ?, ?)
         ON CONFLICT (${column}) DO NOTHING RETURNING *`,
        [target, accountId, token, nowIso()],
      );
      if (!row) throw new Error(`the trigger of ${this.#spec.describe(target)} appeared while it was created`);
      return { trigger: this.#toTrigger(row), created: true };
    });
  }

  async delete(accountId: string, target: K): Promise<boolean> {
    const { table, target: column } = this.#spec;
    return (
      (await this.#db.run(`DELETE FROM ${table} WHERE ${column} = ? AND account_id = ?`, [target, accountId])).changes >
      0
    );
  }

  /** Resolves a trigger URL: the target's account when `token` is its trigger token. Records called_at. */
  async call(target: K, token: string, now: string): Promise<{ accountId: string } | undefined> {
    const { table, target: column } = this.#spec;
    const row = await this.#db.get<{ account_id: string }>(
      `UPDATE ${table} SET called_at = ? WHERE ${column} = ? AND token = ? RETURNING account_id`,
      [now, target, token],
    );
    return row && { accountId: row.account_id };
  }
}
