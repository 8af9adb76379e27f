import type { Log } from '../../shared/log.ts';

/** What coordination logs through: the service's logger, or any with these levels. */
export type CoordinationLog = Pick<Log, 'info' | 'warn' | 'error'>;
