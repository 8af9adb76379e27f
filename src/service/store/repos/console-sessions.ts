/** Console sessions, looked up by the hash of their token (see 019-console-sessions.ts). */
import type { SqlDatabase } from '../sql/database.ts';
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

export class SqlConsoleSessionRepo implements ConsoleSessionRepo {
  readonly #db: SqlDatabase;
  constructor(db: SqlDatabase) {
    this.#db = db;
  }

  async create(token: string, s: ConsoleSessionRecord): Promise<void> {
    await this.#db.run(
      'INSERT INTO console_sessions (token_hash, account_id, created_at, expires_at, last_seen_at) VALUES (?, ?, ?, ?, ?)',
      [hashKey(token), s.accountId, s.createdAt, s.expiresAt, s.lastSeenAt],
    );
  }

  async findActive(token: string, now: string, idleSince: string): Promise<ConsoleSessionRecord | undefined> {
    const row = await this.#db.get<SessionRow>(
      'SELECT * FROM console_sessions WHERE token_hash = $hash AND expires_at > $now AND last_seen_at >= $idleSince',
      { hash: hashKey(token), now, idleSince },
    );
    return row && toSession(row);
  }

  async touch(token: string, now: string): Promise<void> {
    await this.#db.run(
      'UPDATE console_sessions SET last_seen_at = $now WHERE token_hash = $hash AND last_seen_at < $now',
      { hash: hashKey(token), now },
    );
  }

  async delete(token: string): Promise<void> {
    await this.#db.run('DELETE FROM console_sessions WHERE token_hash = ?', [hashKey(token)]);
  }

  async deleteExpired(now: string, idleSince: string): Promise<number> {
    return (
      await this.#db.run('DELETE FROM console_sessions WHERE expires_at <= $now OR last_seen_at < $idleSince', {
        now,
        idleSince,
      })
    ).changes;
  }
}
