/**
 * A PostgreSQL connection of its own (not a pool's) for what lives on one session: an advisory lock,
 * a LISTEN. It says once when it is gone, however it went (an error, the server ending the session,
 * a close), so its owner can act on the loss at once.
 */
import pg from 'pg';

/** How long the kernel waits on a silent peer before probing, and how it probes, in seconds. */
const KEEPALIVE_IDLE_S = 5;
const KEEPALIVE_INTERVAL_S = 2;
const KEEPALIVE_COUNT = 3;

export interface DedicatedClientOptions {
  url: string;
  /** Shown in pg_stat_activity, so an operator can tell the coordination sessions apart. */
  applicationName: string;
  /** Bounds every query, so a connection to a vanished server fails instead of hanging. */
  queryTimeoutMs: number;
  /** Called once when the connection is lost or ended. */
  onLost(err?: Error): void;
}

/** Connects; on failure the half-open client is ended and the error thrown. */
export async function openDedicatedClient(opts: DedicatedClientOptions): Promise<pg.Client> {
  const client = new pg.Client({
    connectionString: opts.url,
    application_name: opts.applicationName,
    // The client side notices a server (or a network) that went silent ...
    keepAlive: true,
    keepAliveInitialDelayMillis: KEEPALIVE_IDLE_S * 1000,
    query_timeout: opts.queryTimeoutMs,
    connectionTimeoutMillis: Math.max(opts.queryTimeoutMs, 5000),
  });
  // Told only once the client is set up and handed over: a failure before that is thrown instead.
  let ready = false;
  let lost = false;
  const lose = (err?: Error): void => {
    if (!ready || lost) return;
    lost = true;
    opts.onLost(err);
  };
  // Without an 'error' listener a dropped connection would crash the process.
  client.on('error', (err) => lose(err));
  client.on('end', () => lose());
  try {
    await client.connect();
    // ... and the server side notices a replica that went silent (a dead host sends no FIN), ending
    // its session, which releases its advisory locks.
    await client.query(
      `SET tcp_keepalives_idle = ${KEEPALIVE_IDLE_S}; SET tcp_keepalives_interval = ${KEEPALIVE_INTERVAL_S}; SET tcp_keepalives_count = ${KEEPALIVE_COUNT}`,
    );
  } catch (err) {
    endQuietly(client);
    throw err;
  }
  ready = true;
  return client;
}

/** Ends a client without waiting: a connection to a vanished server may never answer the goodbye. */
export function endQuietly(client: pg.Client): void {
  client.end().catch(() => {});
}
