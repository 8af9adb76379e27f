/**
 * Leadership through a session-level advisory lock on a dedicated connection: the replica whose
 * session holds pg_try_advisory_lock(key) leads; the others try again every `retryMs`. PostgreSQL
 * releases the lock when the session ends (the replica closed, died, or its connection dropped),
 * so the next try of another replica takes it.
 *
 * No two replicas run leader work at once (docs/architecture.md "Replicas and leadership"):
 * - losing: a leader that loses its connection, or cannot confirm it within `confirmTimeoutMs`
 *   (it asks every `confirmMs`), stops its work first and only then lets the connection go;
 * - taking over: a replica that took the lock starts its work only after `handoverDelayMs`, longer
 *   than the old leader needs to notice a loss (confirmMs + confirmTimeoutMs) and stop.
 */
import { createHash } from 'node:crypto';
import { EventEmitter } from 'node:events';
import type pg from 'pg';
import { LeadershipBase } from './leadership-state.ts';
import type { CoordinationLog } from './log.ts';
import { endQuietly, openDedicatedClient } from './postgres-client.ts';

export interface PostgresLeadershipOptions {
  url: string;
  name: string;
  log: CoordinationLog;
  /** How often a replica that does not hold the lock tries to take it. */
  retryMs?: number;
  /** How often the holder confirms that its session is alive. */
  confirmMs?: number;
  /** How long a confirmation (or any query on the lock's connection) may take. */
  confirmTimeoutMs?: number;
  /** How long a replica that took the lock waits before it starts leader work. */
  handoverDelayMs?: number;
}

/** The advisory lock key of a leadership name: 64 bits of its SHA-256, as PostgreSQL's bigint. */
export function leadershipKey(name: string): string {
  const digest = createHash('sha256').update(`outpost leadership\u0000${name}`).digest();
  return BigInt.asIntN(64, digest.readBigUInt64BE(0)).toString();
}

/** `attempt`: one try for the lock and whether it was taken (for tests and diagnostics). */
export interface PostgresLeadershipEvents {
  attempt: [locked: boolean];
}

export class PostgresLeadership extends LeadershipBase {
  /** Each try for the lock (for tests and diagnostics). */
  readonly events = new EventEmitter<PostgresLeadershipEvents>();
  readonly #url: string;
  readonly #key: string;
  readonly #log: CoordinationLog;
  readonly #retryMs: number;
  readonly #confirmMs: number;
  readonly #confirmTimeoutMs: number;
  readonly #handoverDelayMs: number;
  #client: pg.Client | undefined;
  /** performance.now() when this replica's session took the lock; undefined when it does not hold it. */
  #heldSince: number | undefined;
  /** The hand-over delay of the current hold is over and leading was asked for. */
  #leading = false;
  #timer: NodeJS.Timeout | undefined;
  #step: Promise<void> | undefined;
  #closed = false;

  constructor(opts: PostgresLeadershipOptions) {
    super(opts.name, opts.log);
    this.#url = opts.url;
    this.#key = leadershipKey(opts.name);
    this.#log = opts.log;
    this.#retryMs = opts.retryMs ?? 1000;
    this.#confirmMs = opts.confirmMs ?? 1000;
    this.#confirmTimeoutMs = opts.confirmTimeoutMs ?? 1000;
    this.#handoverDelayMs = opts.handoverDelayMs ?? this.#confirmMs + this.#confirmTimeoutMs + 1000;
  }

  /** Makes the first attempt; a database that cannot be reached yet is tried again every retryMs. */
  start(): Promise<void> {
    this.#closed = false;
    return this.#tick();
  }

  async close(): Promise<void> {
    this.#closed = true;
    clearTimeout(this.#timer);
    await this.#step;
    // Leader work stops while the lock is still held: nobody can take over before it has.
    await this.state.lose();
    const client = this.#client;
    this.#client = undefined;
    this.#heldSince = undefined;
    this.#leading = false;
    // Ending the session releases the lock.
    if (client) await client.end().catch(() => {});
  }

  #tick(): Promise<void> {
    this.#step ??= this.#attempt().finally(() => {
      this.#step = undefined;
      this.#arm();
    });
    return this.#step;
  }

  #arm(): void {
    clearTimeout(this.#timer);
    if (this.#closed) return;
    this.#timer = setTimeout(() => void this.#tick(), this.#nextTickMs());
    this.#timer.unref();
  }

  /** Retrying without the lock; confirming with it, and on time for the end of the hand-over delay. */
  #nextTickMs(): number {
    if (this.#heldSince === undefined) return this.#retryMs;
    if (this.#leading) return this.#confirmMs;
    const untilLeading = this.#heldSince + this.#handoverDelayMs - performance.now();
    return Math.max(0, Math.min(this.#confirmMs, untilLeading));
  }

  async #attempt(): Promise<void> {
    if (this.#closed) return;
    try {
      if (this.#heldSince === undefined) await this.#tryLock();
      else await this.#confirm();
    } catch (err) {
      if (this.#client) await this.#lost(this.#client, err);
      else
        this.#log.warn(
          { err, leadership: this.name },
          'the database cannot be reached for the leadership; trying again',
        );
    }
  }

  async #tryLock(): Promise<void> {
    const client = this.#client ?? (await this.#connect());
    const { rows } = await client.query<{ locked: boolean }>('SELECT pg_try_advisory_lock($1::bigint) AS locked', [
      this.#key,
    ]);
    const locked = rows[0]?.locked === true && this.#client === client;
    this.events.emit('attempt', locked);
    if (!locked) return;
    this.#heldSince = performance.now();
    this.#log.info(
      { leadership: this.name, handoverDelayMs: this.#handoverDelayMs },
      'took the leadership lock; leading after the hand-over delay',
    );
  }

  /** The session is alive, so the lock is still ours; past the hand-over delay, lead. */
  async #confirm(): Promise<void> {
    const client = this.#client;
    if (!client) return;
    await client.query('SELECT 1');
    const heldSince = this.#heldSince;
    if (heldSince === undefined || this.#client !== client || this.#leading) return;
    if (performance.now() - heldSince < this.#handoverDelayMs) return;
    this.#leading = true;
    // Not awaited: starting the work may take a while, and confirmations must go on meanwhile.
    // Work that cannot start here might on another replica: the leadership is given up.
    this.state
      .acquire()
      .catch((err: unknown) => this.#lost(client, err, 'leader work could not start; giving the leadership up'));
  }

  async #connect(): Promise<pg.Client> {
    const client = await openDedicatedClient({
      url: this.#url,
      applicationName: `outpost leadership ${this.name}`,
      queryTimeoutMs: this.#confirmTimeoutMs,
      onLost: (err) => void this.#lost(client, err),
    });
    this.#client = client;
    return client;
  }

  /** Leader work stops first; only then is the connection let go (and another replica may take the lock). */
  async #lost(client: pg.Client | undefined, err: unknown, why?: string): Promise<void> {
    if (!client || client !== this.#client) return;
    const wasHolding = this.#heldSince !== undefined;
    this.#client = undefined;
    this.#heldSince = undefined;
    this.#leading = false;
    const what =
      why ??
      (wasHolding
        ? 'lost the leadership connection; stopping leader work'
        : 'the leadership connection failed; trying again');
    this.#log.warn({ err, leadership: this.name }, what);
    await this.state.lose();
    endQuietly(client);
    // The next try comes after retryMs, as for any replica that does not hold the lock, not at the
    // confirmation the timer was set for (a step in progress arms it when it ends).
    if (!this.#step) this.#arm();
  }
}
