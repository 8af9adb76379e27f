/**
 * Picks the coordination backend from DATABASE_URL: PostgreSQL (advisory-lock leadership and
 * LISTEN/NOTIFY) for replicas on one PostgreSQL database, in-process for SQLite's one service process.
 */
import type { DatabaseConfig } from '../database-url.ts';
import { inProcessCoordination } from './in-process.ts';
import type { CoordinationLog } from './log.ts';
import { PostgresLeadership, type PostgresLeadershipOptions } from './postgres-leadership.ts';
import { PostgresRunSignals, type PostgresRunSignalsOptions } from './postgres-signals.ts';
import type { Coordination } from './types.ts';

/** The one leadership the service's leader work runs under. */
export const SERVICE_LEADERSHIP = 'outpost service';

export interface PostgresCoordinationOptions {
  leadership?: Partial<Omit<PostgresLeadershipOptions, 'url' | 'log'>>;
  signals?: Partial<Omit<PostgresRunSignalsOptions, 'url' | 'log'>>;
}

export function createCoordination(database: DatabaseConfig | undefined, log: CoordinationLog): Coordination {
  if (database?.kind === 'postgres') return postgresCoordination(database.url, log);
  return inProcessCoordination(SERVICE_LEADERSHIP, log);
}

export function postgresCoordination(
  url: string,
  log: CoordinationLog,
  opts: PostgresCoordinationOptions = {},
): Coordination {
  const leadership = new PostgresLeadership({ name: SERVICE_LEADERSHIP, ...opts.leadership, url, log });
  const signals = new PostgresRunSignals({ ...opts.signals, url, log });
  return {
    leadership,
    signals,
    async start() {
      // Listening first: a replica that leads must hear the other replicas' check changes.
      await signals.start();
      await leadership.start();
    },
    async close() {
      await leadership.close();
      await signals.close();
    },
  };
}
