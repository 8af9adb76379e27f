/**
 * Run announcements across replicas through LISTEN/NOTIFY. Announcing delivers to this replica's
 * listeners at once and NOTIFYs the others (through a small pool, so a dropped LISTEN connection
 * does not silence this replica's announcements); a dedicated connection LISTENs. When it drops it is
 * reconnected every `reconnectMs`, and once it listens again every listener is told `missed`, since
 * notifications sent meanwhile are gone.
 */
import { randomUUID } from 'node:crypto';
import pg from 'pg';
import type { Static } from 'typebox';
import { Compile } from 'typebox/compile';
import type { Announced } from '../dispatch/waiters.ts';
import type { CoordinationLog } from './log.ts';
import { endQuietly, openDedicatedClient } from './postgres-client.ts';
import {
  CHECKS_CHANNEL,
  ChecksPayload,
  RUNS_CHANNEL,
  RunsPayload,
  WORK_CHANNEL,
  WorkPayload,
} from './signal-payloads.ts';
import type { QueuedWork, RunSignalListener, RunSignals } from './types.ts';

export interface PostgresRunSignalsOptions {
  url: string;
  log: CoordinationLog;
  /** How long to wait before listening again after the LISTEN connection dropped. */
  reconnectMs?: number;
  /** How often the LISTEN connection is pinged, so a silently dead one is noticed. */
  pingMs?: number;
  /** How long a ping or NOTIFY may take. */
  queryTimeoutMs?: number;
}

const isRunsPayload = Compile(RunsPayload);
const isChecksPayload = Compile(ChecksPayload);
const isWorkPayload = Compile(WorkPayload);

export class PostgresRunSignals implements RunSignals {
  /** Tells this replica's own notifications apart: it delivered them already. */
  readonly #origin = randomUUID();
  readonly #url: string;
  readonly #log: CoordinationLog;
  readonly #reconnectMs: number;
  readonly #pingMs: number;
  readonly #queryTimeoutMs: number;
  readonly #listeners = new Set<RunSignalListener>();
  readonly #pool: pg.Pool;
  #client: pg.Client | undefined;
  #timer: NodeJS.Timeout | undefined;
  #closed = false;

  constructor(opts: PostgresRunSignalsOptions) {
    this.#url = opts.url;
    this.#log = opts.log;
    this.#reconnectMs = opts.reconnectMs ?? 1000;
    this.#pingMs = opts.pingMs ?? 5000;
    this.#queryTimeoutMs = opts.queryTimeoutMs ?? 2000;
    this.#pool = new pg.Pool({
      connectionString: opts.url,
      max: 2,
      query_timeout: this.#queryTimeoutMs,
      application_name: 'outpost notify',
    });
    // An idle pooled connection that drops is replaced on the next NOTIFY; it must not crash the process.
    this.#pool.on('error', (err) => this.#log.warn({ err }, 'a NOTIFY connection dropped'));
  }

  announce(locationId: string, runs: readonly Announced[]): void {
    for (const listener of this.#listeners) listener.announced?.(locationId, runs);
    const kinds = new Map(
      runs.map((r) => [`${r.checkType}/${r.checkClass}`, { checkType: r.checkType, checkClass: r.checkClass }]),
    );
    this.#notify(RUNS_CHANNEL, { origin: this.#origin, locationId, runs: [...kinds.values()] } satisfies Static<
      typeof RunsPayload
    >);
  }

  checkChanged(accountId: string, checkId: string): void {
    this.#notify(CHECKS_CHANNEL, { origin: this.#origin, accountId, checkId } satisfies Static<typeof ChecksPayload>);
  }

  workQueued(kind: QueuedWork): void {
    this.#notify(WORK_CHANNEL, { origin: this.#origin, kind } satisfies Static<typeof WorkPayload>);
  }

  subscribe(listener: RunSignalListener): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  /** Listens; a database that cannot be reached now is an error (the service cannot start without it). */
  async start(): Promise<void> {
    this.#closed = false;
    await this.#listen();
  }

  async close(): Promise<void> {
    this.#closed = true;
    clearTimeout(this.#timer);
    const client = this.#client;
    this.#client = undefined;
    if (client) await client.end().catch(() => {});
    await this.#pool.end();
  }

  /** The enqueue is committed whatever happens here: a lost NOTIFY costs other replicas' waiters latency, not runs. */
  #notify(channel: string, payload: unknown): void {
    this.#pool
      .query('SELECT pg_notify($1, $2)', [channel, JSON.stringify(payload)])
      .catch((err: unknown) =>
        this.#log.warn({ err, channel }, 'NOTIFY failed; other replicas learn at their next poll'),
      );
  }

  async #listen(): Promise<void> {
    const client = await openDedicatedClient({
      url: this.#url,
      applicationName: 'outpost listen',
      queryTimeoutMs: this.#queryTimeoutMs,
      onLost: (err) => this.#lost(client, err),
    });
    client.on('notification', (msg) => this.#received(msg));
    try {
      await client.query(`LISTEN ${RUNS_CHANNEL}; LISTEN ${CHECKS_CHANNEL}; LISTEN ${WORK_CHANNEL}`);
    } catch (err) {
      endQuietly(client);
      throw err;
    }
    // Closed while this reconnect was under way: nobody would end this connection.
    if (this.#closed) {
      endQuietly(client);
      return;
    }
    this.#client = client;
    this.#schedule(this.#pingMs, () => this.#ping(client));
  }

  #schedule(ms: number, fn: () => Promise<void>): void {
    clearTimeout(this.#timer);
    if (this.#closed) return;
    this.#timer = setTimeout(() => void fn(), ms);
    this.#timer.unref();
  }

  async #ping(client: pg.Client): Promise<void> {
    try {
      await client.query('SELECT 1');
      if (this.#client === client) this.#schedule(this.#pingMs, () => this.#ping(client));
    } catch (err) {
      this.#lost(client, err);
    }
  }

  #lost(client: pg.Client, err: unknown): void {
    if (client !== this.#client) return;
    this.#client = undefined;
    endQuietly(client);
    this.#log.warn({ err }, 'the LISTEN connection dropped; listening again');
    this.#schedule(this.#reconnectMs, () => this.#reconnect());
  }

  async #reconnect(): Promise<void> {
    try {
      await this.#listen();
    } catch (err) {
      this.#log.warn({ err }, 'listening again failed; trying again');
      this.#schedule(this.#reconnectMs, () => this.#reconnect());
      return;
    }
    if (this.#closed) return;
    this.#log.info({}, 'listening again; waking every held lease request, announcements may have been missed');
    for (const listener of this.#listeners) listener.missed?.();
  }

  #received(msg: pg.Notification): void {
    const payload = parsed(msg.payload);
    const deliver = this.#deliveryOf(msg.channel, payload);
    if (!deliver) {
      this.#log.warn({ channel: msg.channel }, 'ignored a notification that is not ours');
      return;
    }
    // This replica's own: its listeners had it when it was sent.
    if ((payload as { origin: string }).origin === this.#origin) return;
    for (const listener of this.#listeners) deliver(listener);
  }

  /** What a well-formed notification tells a listener; undefined for anything else. */
  #deliveryOf(channel: string, payload: unknown): ((listener: RunSignalListener) => void) | undefined {
    if (channel === RUNS_CHANNEL && isRunsPayload.Check(payload))
      return (l) => l.announced?.(payload.locationId, payload.runs);
    if (channel === CHECKS_CHANNEL && isChecksPayload.Check(payload))
      return (l) => l.checkChanged?.(payload.accountId, payload.checkId);
    if (channel === WORK_CHANNEL && isWorkPayload.Check(payload)) return (l) => l.workQueued?.(payload.kind);
    return undefined;
  }
}

function parsed(text: string | undefined): unknown {
  try {
    return JSON.parse(text ?? '');
  } catch {
    return undefined;
  }
}
