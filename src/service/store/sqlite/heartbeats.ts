import { randomUUID } from 'node:crypto';
import type { DatabaseSync } from 'node:sqlite';
import { ConflictError } from '../../http/errors.ts';
import type {
  HeartbeatCheckInput,
  HeartbeatEvent,
  HeartbeatEventState,
  HeartbeatRepo,
  HeartbeatState,
  HeartbeatStatus,
  PingInput,
} from '../heartbeat-dashboard-types.ts';
import type { CheckRepo, StoredCheck } from '../store.ts';
import { inTransaction, isUniqueViolation, nowIso } from './db.ts';

interface StateRow {
  check_id: string;
  account_id: string;
  ping_token: string;
  period_ms: number;
  grace_ms: number;
  status: string;
  anchor_ms: number;
  last_ping_at: string | null;
  deadline_ms: number | null;
}

interface EventRow {
  id: string;
  account_id: string;
  check_id: string;
  state: string;
  at_ms: number;
  source: string | null;
  user_agent: string | null;
}

const toState = (row: StateRow): HeartbeatState => ({
  checkId: row.check_id,
  accountId: row.account_id,
  pingToken: row.ping_token,
  periodMs: row.period_ms,
  graceMs: row.grace_ms,
  status: row.status as HeartbeatStatus,
  anchorMs: row.anchor_ms,
  lastPingAt: row.last_ping_at,
  deadlineMs: row.deadline_ms,
});

const toEvent = (row: EventRow): HeartbeatEvent => ({
  id: row.id,
  accountId: row.account_id,
  checkId: row.check_id,
  state: row.state as HeartbeatEventState,
  atMs: row.at_ms,
  source: row.source,
  userAgent: row.user_agent,
});

const tokenTaken = () => new ConflictError('body/heartbeat/pingToken is already in use; choose another or leave it out');

/**
 * Heartbeat state and events. The check row itself is written here too (not through CheckRepo),
 * so a heartbeat check and its state are created and changed in one transaction.
 */
export class SqliteHeartbeatRepo implements HeartbeatRepo {
  readonly #db: DatabaseSync;
  readonly #checks: CheckRepo;
  constructor(db: DatabaseSync, checks: CheckRepo) {
    this.#db = db;
    this.#checks = checks;
  }

  async create(accountId: string, input: HeartbeatCheckInput, nowMs: number) {
    const id = randomUUID();
    const c = input.check;
    try {
      inTransaction(this.#db, () => {
        this.#db
          .prepare(
            `INSERT INTO checks (id, account_id, check_type, name, activated, muted, frequency, frequency_offset, body, created_at)
             VALUES (?, ?, 'HEARTBEAT', ?, ?, ?, ?, ?, ?, ?)`,
          )
          .run(id, accountId, c.name, c.activated ? 1 : 0, c.muted ? 1 : 0, c.frequency, c.frequencyOffset, JSON.stringify(c.body), nowIso());
        this.#db
          .prepare(
            `INSERT INTO heartbeat_states (check_id, account_id, ping_token, period_ms, grace_ms, status, anchor_ms, deadline_ms)
             VALUES (?, ?, ?, ?, ?, 'PENDING', ?, ?)`,
          )
          .run(id, accountId, input.pingToken, input.periodMs, input.graceMs, nowMs, c.activated ? nowMs + input.periodMs + input.graceMs : null);
      });
    } catch (err) {
      if (isUniqueViolation(err)) throw tokenTaken();
      throw err;
    }
    return this.#mustGet(accountId, id);
  }

  async update(accountId: string, checkId: string, input: HeartbeatCheckInput, nowMs: number) {
    const c = input.check;
    let changed: boolean;
    try {
      changed = inTransaction(this.#db, () => {
        const before = this.#stateRow(accountId, checkId);
        const prev = this.#db
          .prepare(`SELECT activated FROM checks WHERE id = ? AND account_id = ? AND check_type = 'HEARTBEAT'`)
          .get(checkId, accountId) as { activated: number } | undefined;
        if (!before || !prev) return false;
        this.#db
          .prepare(
            `UPDATE checks SET name = ?, activated = ?, muted = ?, frequency = ?, frequency_offset = ?, body = ?, updated_at = ?
             WHERE id = ? AND account_id = ?`,
          )
          .run(c.name, c.activated ? 1 : 0, c.muted ? 1 : 0, c.frequency, c.frequencyOffset, JSON.stringify(c.body), nowIso(), checkId, accountId);
        const timingChanged = before.period_ms !== input.periodMs || before.grace_ms !== input.graceMs;
        let { anchor_ms: anchor, deadline_ms: deadline } = before;
        const restart = () => {
          anchor = nowMs;
          deadline = nowMs + input.periodMs + input.graceMs;
        };
        if (!c.activated) {
          deadline = null;
        } else if (prev.activated === 0) {
          // Re-activated: the wait starts now, so time spent deactivated never counts as missed.
          restart();
        } else if (timingChanged && before.status !== 'FAILING') {
          // A new period or grace: the wait starts over, so the change itself never fails the check.
          // A FAILING heartbeat has no deadline and stays failing until its next ping.
          restart();
        }
        this.#db
          .prepare(
            `UPDATE heartbeat_states SET ping_token = ?, period_ms = ?, grace_ms = ?, anchor_ms = ?, deadline_ms = ?
             WHERE check_id = ?`,
          )
          .run(input.pingToken, input.periodMs, input.graceMs, anchor, deadline, checkId);
        return true;
      });
    } catch (err) {
      if (isUniqueViolation(err)) throw tokenTaken();
      throw err;
    }
    return changed ? this.#mustGet(accountId, checkId) : undefined;
  }

  async getState(accountId: string, checkId: string) {
    const row = this.#stateRow(accountId, checkId);
    return row && toState(row);
  }

  async getStates(accountId: string, checkIds: readonly string[]) {
    const states = new Map<string, HeartbeatState>();
    if (checkIds.length === 0) return states;
    const rows = this.#db
      .prepare(`SELECT * FROM heartbeat_states WHERE account_id = ? AND check_id IN (${checkIds.map(() => '?').join(',')})`)
      .all(accountId, ...checkIds) as unknown as StateRow[];
    for (const row of rows) states.set(row.check_id, toState(row));
    return states;
  }

  async recordPing(pingToken: string, ping: PingInput): Promise<HeartbeatEvent | undefined> {
    return inTransaction(this.#db, () => {
      const row = this.#db
        .prepare(
          `SELECT s.*, c.activated FROM heartbeat_states s JOIN checks c ON c.id = s.check_id WHERE s.ping_token = ?`,
        )
        .get(pingToken) as (StateRow & { activated: number }) | undefined;
      if (!row) return undefined;
      // On time: within one period of the last ping (or of the start of the wait). Anything later,
      // including the ping that ends a FAILING spell, is LATE; see docs/api.md "Heartbeats".
      const onTime = row.status !== 'FAILING' && ping.atMs <= row.anchor_ms + row.period_ms;
      const event = this.#insertEvent(row.account_id, row.check_id, onTime ? 'RECEIVED' : 'LATE', ping.atMs, ping.source, ping.userAgent);
      this.#db
        .prepare(`UPDATE heartbeat_states SET status = 'UP', anchor_ms = ?, last_ping_at = ?, deadline_ms = ? WHERE check_id = ?`)
        .run(ping.atMs, new Date(ping.atMs).toISOString(), row.activated === 1 ? ping.atMs + row.period_ms + row.grace_ms : null, row.check_id);
      return event;
    });
  }

  async failOverdue(nowMs: number): Promise<HeartbeatEvent[]> {
    return inTransaction(this.#db, () => {
      const rows = this.#db
        .prepare('SELECT * FROM heartbeat_states WHERE deadline_ms IS NOT NULL AND deadline_ms <= ? ORDER BY deadline_ms')
        .all(nowMs) as unknown as StateRow[];
      const clear = this.#db.prepare(`UPDATE heartbeat_states SET status = 'FAILING', deadline_ms = NULL WHERE check_id = ?`);
      return rows.map((row) => {
        clear.run(row.check_id);
        // Timestamped at the deadline, not at the sweep: that is when it began failing.
        return this.#insertEvent(row.account_id, row.check_id, 'FAILING', row.deadline_ms as number, null, null);
      });
    });
  }

  async nextDeadlineMs(): Promise<number | null> {
    const row = this.#db.prepare('SELECT min(deadline_ms) AS next FROM heartbeat_states WHERE deadline_ms IS NOT NULL').get() as {
      next: number | null;
    };
    return row.next;
  }

  async listEvents(accountId: string, checkId: string, opts: { fromMs: number; toMs: number; limit: number }) {
    const rows = this.#db
      .prepare(
        `SELECT * FROM heartbeat_events WHERE check_id = ? AND account_id = ? AND at_ms >= ? AND at_ms <= ?
         ORDER BY at_ms DESC, seq DESC LIMIT ?`,
      )
      .all(checkId, accountId, opts.fromMs, opts.toMs, opts.limit) as unknown as EventRow[];
    return rows.map(toEvent);
  }

  async getEvent(accountId: string, checkId: string, eventId: string) {
    const row = this.#db
      .prepare('SELECT * FROM heartbeat_events WHERE id = ? AND check_id = ? AND account_id = ?')
      .get(eventId, checkId, accountId) as EventRow | undefined;
    return row && toEvent(row);
  }

  async countEvents(accountId: string, checkId: string, fromMs: number, toMs: number) {
    const row = this.#db
      .prepare(
        `SELECT count(*) AS total, coalesce(sum(state <> 'FAILING'), 0) AS pings FROM heartbeat_events
         WHERE check_id = ? AND account_id = ? AND at_ms >= ? AND at_ms < ?`,
      )
      .get(checkId, accountId, fromMs, toMs) as { total: number; pings: number };
    return { total: row.total, pings: row.pings };
  }

  #stateRow(accountId: string, checkId: string): StateRow | undefined {
    return this.#db.prepare('SELECT * FROM heartbeat_states WHERE check_id = ? AND account_id = ?').get(checkId, accountId) as
      | StateRow
      | undefined;
  }

  #insertEvent(accountId: string, checkId: string, state: HeartbeatEventState, atMs: number, source: string | null, userAgent: string | null): HeartbeatEvent {
    const event: HeartbeatEvent = { id: randomUUID(), accountId, checkId, state, atMs, source, userAgent };
    this.#db
      .prepare('INSERT INTO heartbeat_events (id, account_id, check_id, state, at_ms, source, user_agent) VALUES (?, ?, ?, ?, ?, ?, ?)')
      .run(event.id, accountId, checkId, state, atMs, source, userAgent);
    return event;
  }

  async #mustGet(accountId: string, checkId: string): Promise<{ check: StoredCheck; state: HeartbeatState }> {
    const check = await this.#checks.get(accountId, checkId);
    const state = this.#stateRow(accountId, checkId);
    if (!check || !state) throw new Error(`heartbeat ${checkId} vanished right after it was written`);
    return { check, state: toState(state) };
  }
}
