import { randomUUID } from 'node:crypto';
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
import { isUniqueViolation, nowIso, READ_COMMITTED, type SqlDatabase } from '../sql/database.ts';

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

/** The checks row's values from name to body, then the time of the write, as both writes list them. */
const checkColumns = (c: HeartbeatCheckInput['check']) => [
  c.name,
  c.activated ? 1 : 0,
  c.muted ? 1 : 0,
  c.frequency,
  c.frequencyOffset,
  JSON.stringify(c.body),
  nowIso(),
];

const tokenTaken = () =>
  new ConflictError('body/heartbeat/pingToken is already in use; choose another or leave it out');

/**
 * Heartbeat state and events. The check row itself is written here too (not through CheckRepo),
 * so a heartbeat check and its state are created and changed in one transaction.
 */
export class SqlHeartbeatRepo implements HeartbeatRepo {
  readonly #db: SqlDatabase;
  readonly #checks: CheckRepo;
  constructor(db: SqlDatabase, checks: CheckRepo) {
    this.#db = db;
    this.#checks = checks;
  }

  async create(accountId: string, input: HeartbeatCheckInput, nowMs: number) {
    const id = randomUUID();
    const c = input.check;
    try {
      await this.#db.transaction(async () => {
        await this.#db.run(
          `INSERT INTO checks (id, account_id, check_type, name, activated, muted, frequency, frequency_offset, body, created_at)
           VALUES (?, ?, 'HEARTBEAT', ?, ?, ?, ?, ?, ?, ?)`,
          [id, accountId, ...checkColumns(c)],
        );
        await this.#db.run(
          `INSERT INTO heartbeat_states (check_id, account_id, ping_token, period_ms, grace_ms, status, anchor_ms, deadline_ms)
           VALUES (?, ?, ?, ?, ?, 'PENDING', ?, ?)`,
          [
            id,
            accountId,
            input.pingToken,
            input.periodMs,
            input.graceMs,
            nowMs,
            c.activated ? nowMs + input.periodMs + input.graceMs : null,
          ],
        );
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
      changed = await this.#db.transaction(async () => {
        const before = await this.#stateRow(accountId, checkId);
        const prev = await this.#db.get<{ activated: number }>(
          `SELECT activated FROM checks WHERE id = ? AND account_id = ? AND check_type = 'HEARTBEAT'`,
          [checkId, accountId],
        );
        if (!before || !prev) return false;
        await this.#db.run(
          `UPDATE checks SET name = ?, activated = ?, muted = ?, frequency = ?, frequency_offset = ?, body = ?, updated_at = ?
           WHERE id = ? AND account_id = ?`,
          [...checkColumns(c), checkId, accountId],
        );
        const { anchor, deadline } = nextWait(before, prev.activated === 1, input, nowMs);
        await this.#db.run(
          `UPDATE heartbeat_states SET ping_token = ?, period_ms = ?, grace_ms = ?, anchor_ms = ?, deadline_ms = ?
           WHERE check_id = ?`,
          [input.pingToken, input.periodMs, input.graceMs, anchor, deadline, checkId],
        );
        return true;
      });
    } catch (err) {
      if (isUniqueViolation(err)) throw tokenTaken();
      throw err;
    }
    return changed ? this.#mustGet(accountId, checkId) : undefined;
  }

  async getState(accountId: string, checkId: string) {
    const row = await this.#stateRow(accountId, checkId);
    return row && toState(row);
  }

  async getStates(accountId: string, checkIds: readonly string[]) {
    const states = new Map<string, HeartbeatState>();
    if (checkIds.length === 0) return states;
    const rows = await this.#db.all<StateRow>(
      `SELECT * FROM heartbeat_states WHERE account_id = ? AND check_id IN (${checkIds.map(() => '?').join(',')})`,
      [accountId, ...checkIds],
    );
    for (const row of rows) states.set(row.check_id, toState(row));
    return states;
  }

  async recordPing(pingToken: string, ping: PingInput): Promise<HeartbeatEvent | undefined> {
    // Read-then-write: serializable on PostgreSQL, so a sweep that changed the row meanwhile makes
    // this transaction run again on what the sweep left.
    return this.#db.transaction(async () => {
      const row = await this.#db.get<StateRow & { activated: number }>(
        'SELECT s.*, c.activated FROM heartbeat_states s JOIN checks c ON c.id = s.check_id WHERE s.ping_token = ?',
        [pingToken],
      );
      if (!row) return undefined;
      // On time: within one period of the last ping (or of the start of the wait). Anything later,
      // including the ping that ends a FAILING spell, is LATE; see docs/api.md "Heartbeats".
      const onTime = row.status !== 'FAILING' && ping.atMs <= row.anchor_ms + row.period_ms;
      const event = await this.#insertEvent(
        row.account_id,
        row.check_id,
        onTime ? 'RECEIVED' : 'LATE',
        ping.atMs,
        ping.source,
        ping.userAgent,
      );
      await this.#db.run(
        `UPDATE heartbeat_states SET status = 'UP', anchor_ms = ?, last_ping_at = ?, deadline_ms = ? WHERE check_id = ?`,
        [
          ping.atMs,
          new Date(ping.atMs).toISOString(),
          row.activated === 1 ? ping.atMs + row.period_ms + row.grace_ms : null,
          row.check_id,
        ],
      );
      return event;
    });
  }

  /**
   * One transaction per sweep. Each heartbeat's transition names the status and deadline it read, so
   * when another replica's sweep (or a ping) changed the row first, the update matches nothing and no
   * second FAILING is recorded. Read committed on PostgreSQL: the conditional update is the guard, and
   * a sweep waiting on a row lock then re-reads that row instead of failing the whole sweep.
   */
  async failOverdue(nowMs: number): Promise<HeartbeatEvent[]> {
    return this.#db.transaction(async () => {
      const rows = await this.#db.all<StateRow>(
        'SELECT * FROM heartbeat_states WHERE deadline_ms IS NOT NULL AND deadline_ms <= ? ORDER BY deadline_ms, check_id',
        [nowMs],
      );
      const failed: HeartbeatEvent[] = [];
      for (const row of rows) {
        const event = await this.#failOne(row);
        if (event) failed.push(event);
      }
      return failed;
    }, READ_COMMITTED);
  }

  async nextDeadlineMs(): Promise<number | null> {
    const row = await this.#db.get<{ next: number | null }>(
      'SELECT min(deadline_ms) AS next FROM heartbeat_states WHERE deadline_ms IS NOT NULL',
    );
    return row?.next ?? null;
  }

  async listEvents(accountId: string, checkId: string, opts: { fromMs: number; toMs: number; limit: number }) {
    const rows = await this.#db.all<EventRow>(
      `SELECT * FROM heartbeat_events WHERE check_id = ? AND account_id = ? AND at_ms >= ? AND at_ms <= ?
       ORDER BY at_ms DESC, seq DESC LIMIT ?`,
      [checkId, accountId, opts.fromMs, opts.toMs, opts.limit],
    );
    return rows.map(toEvent);
  }

  async getEvent(accountId: string, checkId: string, eventId: string) {
    const row = await this.#db.get<EventRow>(
      'SELECT * FROM heartbeat_events WHERE id = ? AND check_id = ? AND account_id = ?',
      [eventId, checkId, accountId],
    );
    return row && toEvent(row);
  }

  async countEvents(accountId: string, checkId: string, fromMs: number, toMs: number) {
    const row = await this.#db.get<{ total: number; pings: number }>(
      `SELECT count(*) AS total, coalesce(sum(CASE WHEN state <> 'FAILING' THEN 1 ELSE 0 END), 0) AS pings FROM heartbeat_events
       WHERE check_id = ? AND account_id = ? AND at_ms >= ? AND at_ms < ?`,
      [checkId, accountId, fromMs, toMs],
    );
    return { total: row?.total ?? 0, pings: row?.pings ?? 0 };
  }

  /** The FAILING transition of one overdue heartbeat, if the row is still as `row` saw it. */
  async #failOne(row: StateRow): Promise<HeartbeatEvent | undefined> {
    const { changes } = await this.#db.run(
      `UPDATE heartbeat_states SET status = 'FAILING', deadline_ms = NULL
       WHERE check_id = ? AND status = ? AND deadline_ms = ?`,
      [row.check_id, row.status, row.deadline_ms],
    );
    if (changes === 0) return undefined;
    // Timestamped at the deadline, not at the sweep: that is when it began failing.
    return this.#insertEvent(row.account_id, row.check_id, 'FAILING', row.deadline_ms as number, null, null);
  }

  #stateRow(accountId: string, checkId: string): Promise<StateRow | undefined> {
    return this.#db.get<StateRow>('SELECT * FROM heartbeat_states WHERE check_id = ? AND account_id = ?', [
      checkId,
      accountId,
    ]);
  }

  async #insertEvent(
    accountId: string,
    checkId: string,
    state: HeartbeatEventState,
    atMs: number,
    source: string | null,
    userAgent: string | null,
  ): Promise<HeartbeatEvent> {
    const event: HeartbeatEvent = { id: randomUUID(), accountId, checkId, state, atMs, source, userAgent };
    await this.#db.run(
      'INSERT INTO heartbeat_events (id, account_id, check_id, state, at_ms, source, user_agent) VALUES (?, ?, ?, ?, ?, ?, ?)',
      [event.id, accountId, checkId, state, atMs, source, userAgent],
    );
    return event;
  }

  async #mustGet(accountId: string, checkId: string): Promise<{ check: StoredCheck; state: HeartbeatState }> {
    const check = await this.#checks.get(accountId, checkId);
    const state = await this.#stateRow(accountId, checkId);
    if (!check || !state) throw new Error(`heartbeat ${checkId} vanished right after it was written`);
    return { check, state: toState(state) };
  }
}

/** Where the wait stands after an update: `wasActivated` is the check's activation before it. */
function nextWait(
  before: StateRow,
  wasActivated: boolean,
  input: HeartbeatCheckInput,
  nowMs: number,
): { anchor: number; deadline: number | null } {
  const restarted = { anchor: nowMs, deadline: nowMs + input.periodMs + input.graceMs };
  if (!input.check.activated) return { anchor: before.anchor_ms, deadline: null };
  // Re-activated: the wait starts now, so time spent deactivated never counts as missed.
  if (!wasActivated) return restarted;
  // A new period or grace: the wait starts over, so the change itself never fails the check.
  // A FAILING heartbeat has no deadline and stays failing until its next ping.
  const timingChanged = before.period_ms !== input.periodMs || before.grace_ms !== input.graceMs;
  if (timingChanged && before.status !== 'FAILING') return restarted;
  return { anchor: before.anchor_ms, deadline: before.deadline_ms };
}
