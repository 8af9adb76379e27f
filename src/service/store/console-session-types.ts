/** Sessions of the operator console: see sqlite/migrations/019-console-sessions.ts. */

/**
 * A session as stored. The repository is handed the raw token and keeps only its hash, as the
 * account repository does with API keys; the token itself is only ever in the browser's cookie.
 */
export interface ConsoleSessionRecord {
  accountId: string;
  createdAt: string;
  /** The absolute end of the session, whatever its activity. */
  expiresAt: string;
  lastSeenAt: string;
}

export interface ConsoleSessionRepo {
  create(token: string, session: ConsoleSessionRecord): Promise<void>;
  /**
   * The session, when it is neither past its absolute expiry (`now`) nor idle since before
   * `idleSince`; undefined otherwise, as for an unknown token.
   */
  findActive(token: string, now: string, idleSince: string): Promise<ConsoleSessionRecord | undefined>;
  /** Records activity: the idle expiry starts again from `now`. */
  touch(token: string, now: string): Promise<void>;
  /** Ends the session (sign-out). */
  delete(token: string): Promise<void>;
  /** Deletes sessions past either expiry; returns how many. */
  deleteExpired(now: string, idleSince: string): Promise<number>;
}
