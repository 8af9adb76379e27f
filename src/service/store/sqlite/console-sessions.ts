/** Console sessions on SQLite, looked up by the hash of their token (see 019-console-sessions.ts). */
import type { DatabaseSync, StatementSync } from 'node:sqlite';
import type { ConsoleSessionRecord, ConsoleSessionRepo } from '../console-session-types.ts';
import { hashKey } from './keys.ts';

interface SessionRow {
  token_hash: string;
  account_id: string;
  created_at: string;
  expires_at: string;
  last_seen_at: string;
}

const toSession = (row: SessionRow): ConsoleSessionRecord => ({
  accountId: row.account_id,
  createdAt: row.created_at,
  expiresAt: row.expires_at,
  lastSeenAt: row.last_seen_at,
});

export class SqliteConsoleSessionRepo implements ConsoleSessionRepo {
  readonly #insert: StatementSync;
  readonly #find: StatementSync;
  readonly #touch: StatementSync;
  readonly #delete: StatementSync;
  readonly #deleteExpired: StatementSync;

  constructor(db: DatabaseSync) {
    this.#insert = db.prepare(
      'INSERT INTO console_sessions (token_hash, account_id, created_at, expires_at, last_seen_at) VALUES (?, ?, ?, ?, ?)',
    );
    this.#find = db.prepare('SELECT * FROM console_sessions WHERE token_hash = $hash AND expires_at > $now AND last_seen_at >= $idleSince');
    this.#touch = db.prepare('UPDATE console_sessions SET last_seen_at = $now WHERE token_hash = $hash AND last_seen_at < $now');
    this.#delete = db.prepare('DELETE FROM console_sessions WHERE token_hash = ?');
    this.#deleteExpired = db.prepare('DELETE FROM console_sessions WHERE expires_at <= $now OR last_seen_at < $idleSince');
  }

  async create(token: string, s: ConsoleSessionRecord): Promise<void> {
    this.#insert.run(hashKey(token), s.accountId, s.createdAt, s.expiresAt, s.lastSeenAt);
  }

  async findActive(token: string, now: string, idleSince: string): Promise<ConsoleSessionRecord | undefined> {
    const row = this.#find.get({ hash: hashKey(token), now, idleSince }) as SessionRow | undefined;
    return row && toSession(row);
  }

  async touch(token: string, now: string): Promise<void> {
    this.#touch.run({ hash: hashKey(token), now });
  }

  async delete(token: string): Promise<void> {
    this.#delete.run(hashKey(token));
  }

  async deleteExpired(now: string, idleSince: string): Promise<number> {
    return Number(this.#deleteExpired.run({ now, idleSince }).changes);
  }
}
